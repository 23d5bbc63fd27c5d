// Device helpers shared by the kernels: warp and block reductions and weight element loads.
#pragma once

#include "quant_load.cuh"
#include "switchyard/abi/types.h"
#include "vendor.h"

namespace sy::gpu {

// std::min is not callable from device code on every toolchain.
__device__ __forceinline__ int imin(int a, int b) {
  return a < b ? a : b;
}

__device__ __forceinline__ float silu(float v) {
  return v / (1.0f + expf(-v));
}

// As the recurrent ops define it: v > 20 ? v : log1p(exp(v)).
__device__ __forceinline__ float softplus(float v) {
  return v > 20.0f ? v : log1pf(expf(v));
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = SY_WARP / 2; o > 0; o >>= 1) v += SY_SHFL_XOR(v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = SY_WARP / 2; o > 0; o >>= 1) v = fmaxf(v, SY_SHFL_XOR(v, o));
  return v;
}

// Sum (kMax: maximum) over the block; every thread gets the result. blockDim.x is whole warps.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float part[1024 / SY_WARP];
  __shared__ float total;
  const int lane = threadIdx.x % SY_WARP, warp = threadIdx.x / SY_WARP;
  const int n_warps = blockDim.x / SY_WARP;
  v = kMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float r = lane < n_warps ? part[lane] : (kMax ? -INFINITY : 0.0f);
    r = kMax ? warp_max(r) : warp_sum(r);
    if (lane == 0) total = r;
  }
  __syncthreads();
  const float r = total;
  __syncthreads();  // part and total are reused by the next call
  return r;
}

constexpr int kQ8Block = 32;       // values per Q8_0 block
constexpr int kQ8BlockBytes = 34;  // fp16 scale + 32 int8

// Element k of a weight row of type DT.
template <int DT>
__device__ __forceinline__ float load_w(const uint8_t* row, int64_t k) {
  if constexpr (DT == SY_DTYPE_F32) {
    return reinterpret_cast<const float*>(row)[k];
  } else if constexpr (DT == SY_DTYPE_F16) {
    return sy_half_to_float(reinterpret_cast<const uint16_t*>(row)[k]);
  } else if constexpr (DT == SY_DTYPE_BF16) {
    return sy_bf16_to_float(reinterpret_cast<const uint16_t*>(row)[k]);
  } else if constexpr (DT == SY_DTYPE_Q8_0) {
    const uint8_t* b = row + (k / kQ8Block) * kQ8BlockBytes;
    const uint16_t d = *reinterpret_cast<const uint16_t*>(b);  // blocks are 2-byte aligned
    return sy_half_to_float(d) * (float)(int8_t)b[2 + k % kQ8Block];
  } else {
    return load_quant<DT>(row, k);
  }
}

// Elements k..k+3 (k % 4 == 0), with one vector load for F32/F16/BF16/Q8_0; the caller checked
// the row's alignment.
template <int DT>
__device__ __forceinline__ void load_w4(const uint8_t* row, int64_t k, float out[4]) {
  if constexpr (DT == SY_DTYPE_F32) {
    const float4 v = *reinterpret_cast<const float4*>(row + 4 * k);
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else if constexpr (DT == SY_DTYPE_F16 || DT == SY_DTYPE_BF16) {
    const uint2 v = *reinterpret_cast<const uint2*>(row + 2 * k);
    const uint16_t h[4] = {(uint16_t)(v.x & 0xffffu), (uint16_t)(v.x >> 16),
                           (uint16_t)(v.y & 0xffffu), (uint16_t)(v.y >> 16)};
#pragma unroll
    for (int i = 0; i < 4; ++i)
      out[i] = DT == SY_DTYPE_F16 ? sy_half_to_float(h[i]) : sy_bf16_to_float(h[i]);
  } else if constexpr (DT == SY_DTYPE_Q8_0) {
    const uint8_t* b = row + (k / kQ8Block) * kQ8BlockBytes;
    const float d = sy_half_to_float(*reinterpret_cast<const uint16_t*>(b));
    // Four int8 at an even offset: two 2-byte loads.
    const uint16_t* q = reinterpret_cast<const uint16_t*>(b + 2 + k % kQ8Block);
    const uint16_t lo = q[0], hi = q[1];
    out[0] = d * (float)(int8_t)(lo & 0xff), out[1] = d * (float)(int8_t)(lo >> 8);
    out[2] = d * (float)(int8_t)(hi & 0xff), out[3] = d * (float)(int8_t)(hi >> 8);
  } else {  // the other quantised types decode element by element; a block is never split
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = load_quant<DT>(row, k + i);
  }
}

}  // namespace sy::gpu
