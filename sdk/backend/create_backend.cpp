// A backend plugin's entry (the SDK's handshake with the PluginDesc's info), params and create.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "switchyard/sdk/backend.h"

namespace sy::plugin {

const std::string* find_param(const Params& params, const char* key) {
  const std::string* found = nullptr;
  for (const auto& [k, v] : params)
    if (k == key) found = &v;
  return found;
}

int int_param(const Params& params, const char* key, int fallback, int min, int max) {
  const std::string* v = find_param(params, key);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0 || n < min || n > max)
    throw Error(SY_ERR_INVALID_ARG, "create: param " + std::string(key) + "='" + *v +
                                        "' must be an integer in [" + std::to_string(min) + ", " +
                                        std::to_string(max) + "]");
  return (int)n;
}

int positive_int_param(const Params& params, const char* key, int fallback, int max) {
  return int_param(params, key, fallback, 1, max);
}

Backend::~Backend() {
  for (Buffer* b : buffers) {
    if (b->owned) std::free(b->data);
    delete b;
  }
}

// Backends take the host's whole [backend] table, whose keys other backends may know: an
// unknown key is logged, not refused (scheduler and router options are refused: params.h).
sy_status create_backend(const PluginDesc& desc, const sy_param* params, size_t n_params,
                         sy_backend_t* out) {
  return guard(
      "create",
      [&] {
        if (!out) throw Error(SY_ERR_INVALID_ARG, "create: out is NULL");
        if (n_params > 0 && !params) throw Error(SY_ERR_INVALID_ARG, "create: params is NULL");
        Params p;
        for (size_t i = 0; i < n_params; ++i) {
          if (!params[i].key || !params[i].value)
            throw Error(SY_ERR_INVALID_ARG,
                        "create: params[" + std::to_string(i) + "] has a NULL key or value");
          p.emplace_back(params[i].key, params[i].value);
          bool known = false;
          for (const char* const* k = desc.known_params; k && *k; ++k)
            known |= p.back().first == *k;
          if (!known)
            log_to_host(SY_LOG_WARN, "create: ignoring unknown param '" + p.back().first + "'");
        }
        std::unique_ptr<Backend> be = desc.make(p);
        be->desc = &desc;
        *out = reinterpret_cast<sy_backend_t>(be.release());
      },
      [](const char* message) { set_create_error(message); });
}

sy_status plugin_entry(const PluginDesc& desc, const sy_backend_iface* iface,
                       uint32_t host_abi_version, const sy_host_api* host, sy_plugin_info* info) {
  const Info about{desc.name,
                   desc.version,
                   desc.description,
                   desc.capabilities,
                   0,
                   !desc.hybrid2_ops  ? 4u
                   : !desc.dense2_ops ? 5u
                                      : 0u};
  const sy_status handshake =
      plugin_entry(about, SY_PLUGIN_BACKEND, iface, host_abi_version, host, info);
  if (handshake != SY_OK || !desc.load_check) return handshake;
  // After the handshake, so a host of another ABI hears about the version first.
  if (const char* why = desc.load_check()) {
    char msg[512];
    std::snprintf(msg, sizeof msg, "%s: %s", desc.name, why);
    detail::entry_error(info, msg);
    return SY_ERR_UNAVAILABLE;
  }
  return SY_OK;
}

}  // namespace sy::plugin
