// What the plugin entry needs from the GPU backend (device.cu).
#pragma once

#include <memory>

#include "backend_plugin_util.h"

namespace sy::gpu {

// Weight dtypes matmul and get_rows accept: F32, F16 and BF16 (F32 accumulation) and Q8_0.
constexpr uint64_t kWeightDtypes = (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16) |
                                   (1ull << SY_DTYPE_BF16) | (1ull << SY_DTYPE_Q8_0);

// KV cache dtypes kv_store and attention accept: F32 and F16 (rounded to nearest even).
constexpr uint64_t kKvDtypes = (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16);

// Reads the "device" param and probes it; a backend without a device when there is none.
std::unique_ptr<plugin::Backend> make_backend(const plugin::Params& params);

}  // namespace sy::gpu
