// The host's side of the C boundary: every call into a plugin goes through plugin_call(), so a
// broken plugin that throws a C++ exception across the ABI (which the ABI forbids) stops here
// as SY_ERR_INTERNAL instead of unwinding through the host; the caller then throws sy::Error
// with plugin_message().
#pragma once

#include <string>

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

}  // namespace sy
