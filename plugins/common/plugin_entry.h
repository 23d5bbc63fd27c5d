// The version handshake of an in-tree plugin's sy_plugin_entry (header only, C ABI types only).
#pragma once

#include <algorithm>
#include <cstdio>

#include "switchyard/abi/plugin.h"

namespace sy::plugin {

// Refuses a host of another major, or of a minor older than `min_minor` (the minor that brought
// the plugin's kind), with the reason in the host's error buffer; otherwise writes the
// negotiated version, min(host minor, ours), into info->abi_version.
inline sy_status negotiate(uint32_t host_abi_version, sy_plugin_info* info, const char* name,
                           uint32_t min_minor = 0) {
  const uint32_t major = SY_VERSION_MAJOR(host_abi_version);
  const uint32_t minor = SY_VERSION_MINOR(host_abi_version);
  if (major != SY_ABI_VERSION_MAJOR || minor < min_minor) {
    if (info && info->error_buf)
      std::snprintf(info->error_buf, info->error_buf_size,
                    "%s implements ABI %u.%u (needs at least %u.%u), host offers %u.%u", name,
                    SY_ABI_VERSION_MAJOR, SY_ABI_VERSION_MINOR, SY_ABI_VERSION_MAJOR, min_minor,
                    major, minor);
    return SY_ERR_VERSION;
  }
  info->abi_version =
      SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, std::min<uint32_t>(minor, SY_ABI_VERSION_MINOR));
  return SY_OK;
}

}  // namespace sy::plugin
