#include "host/capabilities.h"

#include <cstdio>

#include "switchyard/abi/plugin.h"

namespace sy {

std::string capability_names(uint64_t caps) {
  static constexpr struct {
    uint64_t bit;
    const char* name;
  } kNames[] = {{SY_CAP_ZERO_COPY_HOST, "zero_copy_host"},
                {SY_CAP_ASYNC, "async"},
                {SY_CAP_CHUNKED_PREFILL, "chunked_prefill"},
                {SY_CAP_PREEMPTION, "preemption"}};
  if (caps == 0) return "none";
  std::string out;
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if (!(caps & bit)) continue;
    std::string name;
    for (const auto& n : kNames)
      if (n.bit == bit) name = n.name;
    if (name.empty()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "bit 0x%llx", static_cast<unsigned long long>(bit));
      name = buf;
    }
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

}  // namespace sy
