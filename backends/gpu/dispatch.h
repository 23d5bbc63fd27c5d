// Host-side helpers of the op files: launch geometry and the weight-dtype switch.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend_plugin_util.h"
#include "dtype_util.h"
#include "vendor.h"

namespace sy::gpu {

constexpr int kThreads = 256;  // default block size: whole warps on every vendor

// Blocks for a grid-stride loop over n elements (the loop covers what the grid does not).
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  return (unsigned)std::clamp<int64_t>((n + threads - 1) / threads, 1, 65535);
}

// Runs body with DT bound to a weight dtype as a compile-time constant.
#define SY_WEIGHT_DTYPE_SWITCH(dtype, op, ...)                                                     \
  switch (dtype) {                                                                                 \
    case SY_DTYPE_F32: {                                                                           \
      constexpr int DT = SY_DTYPE_F32;                                                             \
      __VA_ARGS__;                                                                                 \
    } break;                                                                                       \
    case SY_DTYPE_F16: {                                                                           \
      constexpr int DT = SY_DTYPE_F16;                                                             \
      __VA_ARGS__;                                                                                 \
    } break;                                                                                       \
    case SY_DTYPE_BF16: {                                                                          \
      constexpr int DT = SY_DTYPE_BF16;                                                            \
      __VA_ARGS__;                                                                                 \
    } break;                                                                                       \
    case SY_DTYPE_Q8_0: {                                                                          \
      constexpr int DT = SY_DTYPE_Q8_0;                                                            \
      __VA_ARGS__;                                                                                 \
    } break;                                                                                       \
    default:                                                                                       \
      throw plugin::PluginError(SY_ERR_UNSUPPORTED, std::string(op) + ": weight dtype " +          \
                                                        std::to_string(dtype) + " not supported"); \
  }

}  // namespace sy::gpu
