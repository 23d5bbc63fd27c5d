// CUDA (nvcc): the names the sources use are CUDA's own, so this only includes and defines the
// few vendor constants.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define SY_GPU_RUNTIME "CUDA"  // in messages: "no CUDA device"
#define SY_GPU_VENDOR "NVIDIA"
#define SY_WARP 32
#define SY_SHFL_XOR(v, lane_mask) __shfl_xor_sync(0xffffffffu, (v), (lane_mask), SY_WARP)

__device__ __forceinline__ float sy_half_to_float(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ uint16_t sy_float_to_half(float f) {  // round to nearest even
  return __half_as_ushort(__float2half_rn(f));
}
