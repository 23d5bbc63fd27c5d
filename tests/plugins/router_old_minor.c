/* A router that negotiates ABI 1.1, the minor before routers existed: the host must refuse it,
 * since under 1.1 there is no router kind to speak. */
#include "switchyard/abi/plugin.h"

static sy_status create(const sy_param* p, size_t n, sy_router_t* out) {
  (void)p;
  (void)n;
  *out = (sy_router_t)1;
  return SY_OK;
}
static void destroy(sy_router_t r) {
  (void)r;
}
static const char* last_error(sy_router_t r) {
  (void)r;
  return "";
}
static sy_status route(sy_router_t r, const sy_route_request* q, sy_route_decision* d) {
  (void)r;
  (void)q;
  d->path = SY_PATH_LIGHT;
  return SY_OK;
}
static const sy_router_iface kIface = {
    sizeof(sy_router_iface), 0, create, destroy, last_error, route};

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host;
  (void)host_abi_version;
  info->abi_version = SY_MAKE_VERSION(1, 1);
  info->kind = SY_PLUGIN_ROUTER;
  info->name = "router_old_minor";
  info->iface = &kIface;
  return SY_OK;
}
