// The host's side of the C boundary: every call into a plugin goes through plugin_call(), so a
// broken plugin that throws a C++ exception across the ABI (which the ABI forbids) stops here
// as SY_ERR_INTERNAL instead of unwinding through the host; the caller then throws sy::Error
// with plugin_message().
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "switchyard/abi/types.h"

namespace sy {

template <class F>
sy_status plugin_call(F&& f, bool* threw = nullptr) noexcept {
  try {
    return f();
  } catch (...) {
    if (threw) *threw = true;
    return SY_ERR_INTERNAL;
  }
}

// What a failed call says: the plugin's last_error, or why there is none.
inline std::string plugin_message(const char* last_error, bool threw) {
  if (threw) return "threw an exception across the C ABI";
  return last_error && *last_error ? last_error : "unknown error";
}

// A plugin's create entry (`api->create`) given the host's key/value params, through plugin_call:
// SY_OK with *out set, or the failure's status with *out nullptr and `why` saying what the plugin
// said (plugin_message). The caller throws its own error type with the message.
template <class Api, class H>
sy_status create_through(const Api& api,
                         const std::vector<std::pair<std::string, std::string>>& params, H* out,
                         std::string& why) {
  std::vector<sy_param> p;
  for (const auto& [k, v] : params) p.push_back({k.c_str(), v.c_str()});
  bool threw = false;
  const sy_status st = plugin_call([&] { return api.create(p.data(), p.size(), out); }, &threw);
  if (st != SY_OK) {
    *out = nullptr;
    why = plugin_message(threw ? nullptr : api.last_error(nullptr), threw);
  }
  return st;
}

}  // namespace sy
