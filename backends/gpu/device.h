// What the plugin entry needs from the GPU backend (device.cu).
#pragma once

#include <memory>

#include "switchyard/common/dtype.h"
#include "switchyard/sdk/backend.h"

namespace sy::gpu {

// Weight dtypes matmul, moe_matmul and get_rows accept: every type of the dtype table (the
// kernels decode each one in load_w, device_common.cuh; F32 accumulation).
constexpr uint64_t kWeightDtypes = dtype::weight_mask();

// KV cache dtypes kv_store and attention accept: F32 and F16 (rounded to nearest even).
constexpr uint64_t kKvDtypes = (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16);

// Reads the "device" param and probes it; a backend without a device when there is none.
std::unique_ptr<plugin::Backend> make_backend(const plugin::Params& params);

}  // namespace sy::gpu
