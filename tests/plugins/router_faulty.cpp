// A router that misbehaves by prompt length, so a test knows which request met which fault:
//   prompt_len % 4 == 1  route fails (SY_ERR_INTERNAL) with "router_faulty: cannot route <len>"
//   prompt_len % 4 == 2  answers path 7, which does not exist
//   prompt_len % 4 == 3  throws a C++ exception through the C ABI
//   prompt_len % 4 == 0  light
// Its create fails with "router_faulty: refusing to start" when given fail_create = 1.
#include <cstring>
#include <stdexcept>
#include <string>

#include "switchyard/abi/plugin.h"

namespace {

struct Faulty {
  std::string error;
};
std::string g_create_error;

sy_status create(const sy_param* p, size_t n, sy_router_t* out) {
  for (size_t i = 0; i < n; ++i)
    if (!std::strcmp(p[i].key, "fail_create")) {
      g_create_error = "router_faulty: refusing to start";
      return SY_ERR_UNAVAILABLE;
    }
  *out = reinterpret_cast<sy_router_t>(new Faulty());
  return SY_OK;
}
void destroy(sy_router_t r) {
  delete reinterpret_cast<Faulty*>(r);
}
const char* last_error(sy_router_t r) {
  return r ? reinterpret_cast<Faulty*>(r)->error.c_str() : g_create_error.c_str();
}
sy_status route(sy_router_t r, const sy_route_request* q, sy_route_decision* d) {
  auto* f = reinterpret_cast<Faulty*>(r);
  switch (q->prompt_len % 4) {
    case 1:
      f->error = "router_faulty: cannot route " + std::to_string(q->prompt_len);
      return SY_ERR_INTERNAL;
    case 2:
      d->path = 7;
      return SY_OK;
    case 3:
      throw std::runtime_error("router_faulty: thrown");
    default:
      d->path = SY_PATH_LIGHT;
      return SY_OK;
  }
}
const sy_router_iface kIface = {sizeof(sy_router_iface), 0, create, destroy, last_error, route};

}  // namespace

extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                               sy_plugin_info* info) {
  (void)host;
  (void)host_abi_version;
  info->abi_version = SY_ABI_VERSION;
  info->kind = SY_PLUGIN_ROUTER;
  info->name = "router_faulty";
  info->iface = &kIface;
  return SY_OK;
}
