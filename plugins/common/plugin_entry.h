// The version handshake of an in-tree plugin's sy_plugin_entry (header only, C ABI types only).
#pragma once

#include <algorithm>
#include <cstdio>

#include "switchyard/abi/plugin.h"

#ifndef SY_NOTE_OWNER
// Headers before 1.3 (the frozen ABI fixtures) have no metadata note: the same fields as a
// plain table, which the entry reads alike; the file then carries no note, as such plugins do.
typedef struct sy_plugin_note {
  uint32_t namesz, descsz, type;
  char owner[12];
  uint32_t format, kind, abi_version, capabilities_lo, capabilities_hi, reserved;
  char name[64];
  char version[32];
  char description[128];
} sy_plugin_note;
#define SY_PLUGIN_NOTE(kind, name, version, capabilities, description)                \
  static const sy_plugin_note sy_plugin_note_ = {                                     \
      0, 0, 0,    "",      0,          (uint32_t)(kind), 0, (uint32_t)(capabilities), \
      0, 0, name, version, description}
#endif

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

// Fills the info fields the metadata note also states, from the note, so the two cannot differ.
inline void describe_from_note(sy_plugin_info* info, const sy_plugin_note& note) {
  info->kind = note.kind;
  info->name = note.name;
  info->version = note.version;
  info->description = note.description;
  info->capabilities = uint64_t(note.capabilities_lo) | (uint64_t(note.capabilities_hi) << 32);
}

}  // namespace sy::plugin
