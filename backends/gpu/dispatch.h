// Host-side helpers of the op files: launch geometry and the weight-dtype switch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "switchyard/common/dtype.h"
#include "switchyard/sdk/backend.h"
#include "vendor.h"

namespace sy::gpu {

constexpr int kThreads = 256;  // default block size: whole warps on every vendor

// Blocks for a grid-stride loop over n elements (the loop covers what the grid does not).
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  return (unsigned)std::clamp<int64_t>((n + threads - 1) / threads, 1, 65535);
}

// A kernel's fixed-size limit: SY_ERR_UNSUPPORTED naming the value unless ok.
inline void need(bool ok, const char* op, const char* what, int64_t value, int64_t limit) {
  if (!ok)
    throw plugin::Error(SY_ERR_UNSUPPORTED, std::string(op) + ": " + what + " " +
                                                std::to_string(value) + " above " +
                                                std::to_string(limit) + " not supported");
}

// Runs body with DT bound to a weight dtype as a compile-time constant: every type of the dtype
// table (device.h's kWeightDtypes); a type the table gains needs a case here and a decoder in
// quant_load.cuh.
#define SY_WEIGHT_DTYPE_CASE(T, ...) \
  case SY_DTYPE_##T: {               \
    constexpr int DT = SY_DTYPE_##T; \
    __VA_ARGS__;                     \
  } break;
#define SY_WEIGHT_DTYPE_SWITCH(dtype, op, ...)                                               \
  switch (dtype) {                                                                           \
    SY_WEIGHT_DTYPE_CASE(F32, __VA_ARGS__)                                                   \
    SY_WEIGHT_DTYPE_CASE(F16, __VA_ARGS__)                                                   \
    SY_WEIGHT_DTYPE_CASE(BF16, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q4_0, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q4_1, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q5_0, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q5_1, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q8_0, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q2_K, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q3_K, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q4_K, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q5_K, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(Q6_K, __VA_ARGS__)                                                  \
    SY_WEIGHT_DTYPE_CASE(IQ4_NL, __VA_ARGS__)                                                \
    SY_WEIGHT_DTYPE_CASE(IQ4_XS, __VA_ARGS__)                                                \
    SY_WEIGHT_DTYPE_CASE(MXFP4, __VA_ARGS__)                                                 \
    default:                                                                                 \
      throw plugin::Error(SY_ERR_UNSUPPORTED, std::string(op) + ": weight dtype " +          \
                                                  std::to_string(dtype) + " not supported"); \
  }

}  // namespace sy::gpu
