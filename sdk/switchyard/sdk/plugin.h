// The Switchyard plugin SDK, for every plugin kind: the error a plugin throws, the boundary that
// turns any exception into a status and a last_error, the version handshake of sy_plugin_entry,
// and the host's services (log, counters). Header only, C ABI types only cross the boundary;
// scheduler.h, router.h and backend.h build a plugin kind on it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "switchyard/abi/plugin.h"

namespace sy::plugin {

// The one error a plugin throws: a status for the host and a message for last_error. The SDK
// catches it (and everything else) at the C boundary.
class Error : public std::runtime_error {
 public:
  Error(sy_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  sy_status status() const { return status_; }

 private:
  sy_status status_;
};
using PluginError = Error;  // the backend kernels' older name

// What sy_plugin_info says about a plugin (static storage).
struct Info {
  const char* name;
  const char* version;
  const char* description;
  uint64_t capabilities = 0;  // SY_CAP_*
  uint32_t min_minor = 0;     // the ABI minor that brought the plugin's kind (routers: 2)
  // The newest minor the plugin honours, when below the headers' (a backend without the 1.5
  // ops speaks 1.4, so the host never sends it 1.5 members it would ignore); 0: the headers'.
  uint32_t max_minor = 0;
};

// True when a struct of `struct_size` bytes holds the member at [offset, offset + size).
constexpr bool covers(uint32_t struct_size, size_t offset, size_t size) {
  return offset + size <= struct_size;
}
#define SY_SDK_COVERS(s, type, field) \
  ::sy::plugin::covers((s)->struct_size, offsetof(type, field), sizeof((s)->field))

namespace detail {

// One per plugin module (hidden symbols, loaded RTLD_LOCAL): the host's table and our name.
struct HostState {
  std::atomic<const sy_host_api*> host{nullptr};
  std::atomic<const char*> name{"plugin"};
};
inline HostState& host_state() {
  static HostState s;
  return s;
}

// The message of the last failed create, which the ABI reads with last_error(NULL): there is no
// handle to keep it in. Process-wide as the ABI says (the host reads it right after the failed
// call); a fixed buffer, so nothing is left to destroy after dlclose.
struct CreateError {
  std::mutex mu;
  char text[512] = {};
};
inline CreateError& create_error_slot() {
  static CreateError e;
  return e;
}

}  // namespace detail

inline const char* create_error() noexcept {
  return detail::create_error_slot().text;
}
inline void set_create_error(const char* message) noexcept {
  auto& e = detail::create_error_slot();
  std::lock_guard<std::mutex> lock(e.mu);
  std::snprintf(e.text, sizeof e.text, "%s", message);
}

// Stores `message` in a handle's slot without throwing (an allocation failure leaves it empty).
inline void set_error(std::string& slot, const char* message) noexcept {
  try {
    slot = message;
  } catch (...) {
    slot.clear();
  }
}

// Runs f() so that no exception crosses the C boundary: an Error gives its status and message,
// bad_alloc SY_ERR_OUT_OF_MEMORY, anything else SY_ERR_INTERNAL; `report(message)` receives the
// message ("<prefix>: out of memory", "<prefix>: internal error: <what>" for the latter two).
template <class F, class Report>
sy_status guard(const char* prefix, F&& f, Report&& report) noexcept {
  char message[512];
  try {
    f();
    return SY_OK;
  } catch (const Error& e) {
    report(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    std::snprintf(message, sizeof message, "%s: out of memory", prefix);
    report(message);
    return SY_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof message, "%s: internal error: %s", prefix, e.what());
    report(message);
    return SY_ERR_INTERNAL;
  } catch (...) {
    std::snprintf(message, sizeof message, "%s: internal error", prefix);
    report(message);
    return SY_ERR_INTERNAL;
  }
}

// Host services; no-ops when the host gave none (a test calling the entry with NULL).
inline const sy_host_api* host() {
  return detail::host_state().host.load();
}
inline void log_to_host(sy_log_level level, const std::string& message) {
  const sy_host_api* h = host();
  if (!h || !SY_SDK_COVERS(h, sy_host_api, log) || !h->log) return;
  h->log(level, detail::host_state().name.load(), message.c_str());
}
inline void counter_add(const char* name, double delta) {
  const sy_host_api* h = host();
  if (h && SY_SDK_COVERS(h, sy_host_api, counter_add) && h->counter_add)
    h->counter_add(name, delta);
}
#if SY_ABI_VERSION_MINOR >= 3
// Adds to a counter of the engine that planned with `view`: through ABI 1.3's host_ctx when
// both the host table and the view have it, else process-wide (an older host).
inline void counter_add(const sy_sched_view& view, const char* name, double delta) {
  const sy_host_api* h = host();
  if (h && SY_SDK_COVERS(h, sy_host_api, counter_add_to) && h->counter_add_to &&
      SY_SDK_COVERS(&view, sy_sched_view, host_ctx))
    h->counter_add_to(view.host_ctx, name, delta);
  else
    counter_add(name, delta);
}
#endif

namespace detail {

inline void entry_error(sy_plugin_info* info, const char* message) {
  if (!SY_SDK_COVERS(info, sy_plugin_info, error_buf_size) || !info->error_buf ||
      info->error_buf_size == 0)
    return;
  std::snprintf(info->error_buf, info->error_buf_size, "%s", message);
}

inline void shutdown_plugin() {
  host_state().host.store(nullptr);
}

}  // namespace detail

#ifdef SY_NOTE_OWNER
namespace detail {

// Copies a NUL-terminated string into a note field; too long a string stops the compile (a
// throw in a constant expression).
constexpr void note_field(char* field, size_t size, const char* text) {
  size_t i = 0;
  for (; text[i]; ++i) {
    if (i + 1 >= size) throw "plugin name, version or description longer than its note field";
    field[i] = text[i];
  }
  for (; i < size; ++i) field[i] = 0;
}

}  // namespace detail

// The plugin's metadata note (abi/switchyard/abi/plugin.h, since 1.3) from the same Info the
// entry reports, so the two cannot disagree.
constexpr sy_plugin_note make_note(const Info& about, sy_plugin_kind kind) {
  sy_plugin_note n{};
  n.namesz = sizeof(SY_NOTE_OWNER);
  n.descsz = static_cast<uint32_t>(sizeof(sy_plugin_note) - 24);
  n.type = SY_NOTE_PLUGIN;
  detail::note_field(n.owner, sizeof n.owner, SY_NOTE_OWNER);
  n.format = SY_NOTE_FORMAT;
  n.kind = kind;
  n.abi_version = SY_ABI_VERSION;
  n.capabilities_lo = static_cast<uint32_t>(about.capabilities & 0xffffffffu);
  n.capabilities_hi = static_cast<uint32_t>(about.capabilities >> 32);
  detail::note_field(n.name, sizeof n.name, about.name);
  detail::note_field(n.version, sizeof n.version, about.version);
  detail::note_field(n.description, sizeof n.description, about.description);
  return n;
}

// Places the note in the file (the SY_PLUGIN_NOTE section), at file scope.
#define SY_SDK_PLUGIN_NOTE(kind, about)                                         \
  __attribute__((section(".note.switchyard"), used,                             \
                 aligned(4))) static constexpr sy_plugin_note sy_plugin_note_ = \
      ::sy::plugin::make_note(about, kind)
#else
// Headers before 1.3 (the frozen ABI fixtures) have no note: the file carries none.
#define SY_SDK_PLUGIN_NOTE(kind, about) static_assert(true, "")
#endif

// The whole of sy_plugin_entry: refuses a host of another major, or of a minor older than the
// one that brought the plugin's kind, with the reason in the host's error buffer; otherwise
// negotiates min(host minor, ours) and fills the fields the host's info covers.
inline sy_status plugin_entry(const Info& about, sy_plugin_kind kind, const void* iface,
                              uint32_t host_abi_version, const sy_host_api* host,
                              sy_plugin_info* info) noexcept {
  if (!info || info->struct_size < sizeof(uint32_t)) return SY_ERR_INVALID_ARG;
  const uint32_t major = SY_VERSION_MAJOR(host_abi_version);
  const uint32_t minor = SY_VERSION_MINOR(host_abi_version);
  char msg[200];
  if (major != SY_ABI_VERSION_MAJOR) {
    std::snprintf(msg, sizeof msg, "%s: host ABI major %u differs from the plugin's ABI %u.%u",
                  about.name, major, SY_ABI_VERSION_MAJOR, SY_ABI_VERSION_MINOR);
    detail::entry_error(info, msg);
    return SY_ERR_VERSION;
  }
  if (minor < about.min_minor) {
    std::snprintf(msg, sizeof msg,
                  "%s implements ABI %u.%u (needs at least %u.%u), host offers %u.%u", about.name,
                  SY_ABI_VERSION_MAJOR, SY_ABI_VERSION_MINOR, SY_ABI_VERSION_MAJOR, about.min_minor,
                  major, minor);
    detail::entry_error(info, msg);
    return SY_ERR_VERSION;
  }
  detail::host_state().host.store(host);
  detail::host_state().name.store(about.name);
  // Only the fields the host's struct covers: an older host has a shorter info.
  const uint32_t ours = about.max_minor ? about.max_minor : SY_ABI_VERSION_MINOR;
  if (SY_SDK_COVERS(info, sy_plugin_info, abi_version))
    info->abi_version = SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, std::min<uint32_t>(minor, ours));
  if (SY_SDK_COVERS(info, sy_plugin_info, kind)) info->kind = kind;
  if (SY_SDK_COVERS(info, sy_plugin_info, name)) info->name = about.name;
  if (SY_SDK_COVERS(info, sy_plugin_info, version)) info->version = about.version;
  if (SY_SDK_COVERS(info, sy_plugin_info, description)) info->description = about.description;
  if (SY_SDK_COVERS(info, sy_plugin_info, capabilities)) info->capabilities = about.capabilities;
  if (SY_SDK_COVERS(info, sy_plugin_info, iface)) info->iface = iface;
  if (SY_SDK_COVERS(info, sy_plugin_info, shutdown)) info->shutdown = &detail::shutdown_plugin;
  return SY_OK;
}

}  // namespace sy::plugin
