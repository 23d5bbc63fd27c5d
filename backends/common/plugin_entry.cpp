// The plugin entry (version negotiation, info), host logging, params and create.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backend_plugin_util.h"
#include "plugin_internal.h"

namespace sy::plugin {
namespace {

std::atomic<const sy_host_api*> g_host{nullptr};
std::atomic<const char*> g_name{"backend"};

// True when a struct of `struct_size` bytes contains the member at `offset` of `size` bytes.
bool covers(uint32_t struct_size, size_t offset, size_t size) {
  return offset + size <= struct_size;
}

#define SY_COVERS(s, type, field) \
  covers((s)->struct_size, offsetof(type, field), sizeof((s)->field))

void entry_error(sy_plugin_info* info, const char* message) {
  if (!SY_COVERS(info, sy_plugin_info, error_buf_size) || !info->error_buf ||
      info->error_buf_size == 0)
    return;
  std::snprintf(info->error_buf, info->error_buf_size, "%s", message);
}

void shutdown_plugin() {
  g_host.store(nullptr);
}

}  // namespace

namespace internal {

namespace {
thread_local char t_error[512];
}  // namespace

const char* thread_error() {
  return t_error;
}

void set_thread_error(const char* message) noexcept {
  std::snprintf(t_error, sizeof t_error, "%s", message);
}

void set_error(std::string& slot, const char* message) noexcept {
  try {
    slot = message;
  } catch (...) {
    slot.clear();
  }
}

}  // namespace internal

void log_to_host(sy_log_level level, const std::string& message) {
  const sy_host_api* host = g_host.load();
  if (!host || !SY_COVERS(host, sy_host_api, log) || !host->log) return;
  host->log(level, g_name.load(), message.c_str());
}

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
    throw PluginError(SY_ERR_INVALID_ARG, "create: param " + std::string(key) + "='" + *v +
                                              "' must be an integer in [" + std::to_string(min) +
                                              ", " + std::to_string(max) + "]");
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

sy_status create_backend(const PluginDesc& desc, const sy_param* params, size_t n_params,
                         sy_backend_t* out) {
  try {
    if (!out) throw PluginError(SY_ERR_INVALID_ARG, "create: out is NULL");
    if (n_params > 0 && !params) throw PluginError(SY_ERR_INVALID_ARG, "create: params is NULL");
    Params p;
    for (size_t i = 0; i < n_params; ++i) {
      if (!params[i].key || !params[i].value)
        throw PluginError(SY_ERR_INVALID_ARG,
                          "create: params[" + std::to_string(i) + "] has a NULL key or value");
      p.emplace_back(params[i].key, params[i].value);
      bool known = false;
      for (const char* const* k = desc.known_params; k && *k; ++k) known |= p.back().first == *k;
      if (!known)
        log_to_host(SY_LOG_WARN, "create: ignoring unknown param '" + p.back().first + "'");
    }
    std::unique_ptr<Backend> be = desc.make(p);
    be->desc = &desc;
    *out = reinterpret_cast<sy_backend_t>(be.release());
    return SY_OK;
  } catch (const PluginError& e) {
    internal::set_thread_error(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    internal::set_thread_error("create: out of memory");
    return SY_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    char message[512];
    std::snprintf(message, sizeof message, "create: internal error: %s", e.what());
    internal::set_thread_error(message);
    return SY_ERR_INTERNAL;
  } catch (...) {
    internal::set_thread_error("create: internal error");
    return SY_ERR_INTERNAL;
  }
}

sy_status plugin_entry(const PluginDesc& desc, const sy_backend_iface* iface,
                       uint32_t host_abi_version, const sy_host_api* host, sy_plugin_info* info) {
  if (!info || info->struct_size < sizeof(uint32_t)) return SY_ERR_INVALID_ARG;
  try {
    const uint32_t host_major = SY_VERSION_MAJOR(host_abi_version);
    if (host_major != SY_ABI_VERSION_MAJOR) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "%s: host ABI major %u differs from the plugin's ABI %u.%u",
                    desc.name, host_major, SY_ABI_VERSION_MAJOR, SY_ABI_VERSION_MINOR);
      entry_error(info, msg);
      return SY_ERR_VERSION;
    }
    if (desc.load_check)
      if (const char* why = desc.load_check()) {
        char msg[512];
        std::snprintf(msg, sizeof msg, "%s: %s", desc.name, why);
        entry_error(info, msg);
        return SY_ERR_UNAVAILABLE;
      }
    g_host.store(host);
    g_name.store(desc.name);
    const uint32_t minor =
        std::min<uint32_t>(SY_VERSION_MINOR(host_abi_version), SY_ABI_VERSION_MINOR);
    // Only the fields the host's struct covers: an older host has a shorter info.
    if (SY_COVERS(info, sy_plugin_info, abi_version))
      info->abi_version = SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, minor);
    if (SY_COVERS(info, sy_plugin_info, kind)) info->kind = SY_PLUGIN_BACKEND;
    if (SY_COVERS(info, sy_plugin_info, name)) info->name = desc.name;
    if (SY_COVERS(info, sy_plugin_info, version)) info->version = desc.version;
    if (SY_COVERS(info, sy_plugin_info, description)) info->description = desc.description;
    if (SY_COVERS(info, sy_plugin_info, capabilities)) info->capabilities = desc.capabilities;
    if (SY_COVERS(info, sy_plugin_info, iface)) info->iface = iface;
    if (SY_COVERS(info, sy_plugin_info, shutdown)) info->shutdown = &shutdown_plugin;
    return SY_OK;
  } catch (...) {
    entry_error(info, "plugin entry failed");
    return SY_ERR_INTERNAL;
  }
}

}  // namespace sy::plugin
