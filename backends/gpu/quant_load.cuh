// Device decoding of one element of a quantised weight row (layouts in block_formats.h): the
// kernels call load_w<DT> for every element they read, so each type is decoded in the kernel
// from the block that holds the element. Products are rounded one at a time (__fmul_rn) so no
// FMA contraction changes them: get_rows gives exactly cpu_ref's values.
#pragma once

#include "switchyard/abi/types.h"
#include "switchyard/common/block_formats.h"
#include "vendor.h"

namespace sy::gpu {

using dtype::BlockIq4Nl;
using dtype::BlockIq4Xs;
using dtype::BlockMxfp4;
using dtype::BlockQ2K;
using dtype::BlockQ3K;
using dtype::BlockQ4_0;
using dtype::BlockQ4_1;
using dtype::BlockQ4K;
using dtype::BlockQ5_0;
using dtype::BlockQ5_1;
using dtype::BlockQ5K;
using dtype::BlockQ6K;

// The 16 IQ4 levels as two packed constants: no table in device memory is needed.
constexpr uint64_t pack_levels(int first) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | (uint8_t)dtype::kIq4nlLevels[first + i];
  return v;
}
constexpr uint64_t kIq4LevelsLo = pack_levels(0), kIq4LevelsHi = pack_levels(8);

__device__ __forceinline__ float iq4_level(int code) {
  const uint64_t w = code < 8 ? kIq4LevelsLo : kIq4LevelsHi;
  return (float)(int8_t)(uint8_t)(w >> (8 * (code & 7)));
}

// The 16 doubled E2M1 values of MXFP4, packed the same way.
constexpr uint64_t pack_mxfp4(int first) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | (uint8_t)dtype::kMxfp4Levels[first + i];
  return v;
}
constexpr uint64_t kMxfp4Lo = pack_mxfp4(0), kMxfp4Hi = pack_mxfp4(8);

__device__ __forceinline__ float mxfp4_level(int code) {
  const uint64_t w = code < 8 ? kMxfp4Lo : kMxfp4Hi;
  return (float)(int8_t)(uint8_t)(w >> (8 * (code & 7)));
}

// The 4-bit code of value j of a 32-value block's qs: low nibbles 0..15, high nibbles 16..31.
__device__ __forceinline__ int nibble32(const uint8_t* qs, int j) {
  return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
}

// Element k of a row of blocks of type DT (the types load_w does not decode itself).
template <int DT>
__device__ __forceinline__ float load_quant(const uint8_t* row, int64_t k) {
  if constexpr (DT == SY_DTYPE_Q4_0 || DT == SY_DTYPE_IQ4_NL) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + k / 32;
    const int q = nibble32(b->qs, (int)(k % 32));
    return __fmul_rn(DT == SY_DTYPE_Q4_0 ? (float)(q - 8) : iq4_level(q), sy_half_to_float(b->d));
  } else if constexpr (DT == SY_DTYPE_Q4_1) {
    const BlockQ4_1* b = reinterpret_cast<const BlockQ4_1*>(row) + k / 32;
    const int q = nibble32(b->qs, (int)(k % 32));
    return __fmul_rn((float)q, sy_half_to_float(b->d)) + sy_half_to_float(b->m);
  } else if constexpr (DT == SY_DTYPE_Q5_0) {
    const BlockQ5_0* b = reinterpret_cast<const BlockQ5_0*>(row) + k / 32;
    const int j = (int)(k % 32);
    const int q = nibble32(b->qs, j) | ((b->qh[j / 8] >> (j % 8)) & 1) << 4;
    return __fmul_rn((float)(q - 16), sy_half_to_float(b->d));
  } else if constexpr (DT == SY_DTYPE_Q5_1) {
    const BlockQ5_1* b = reinterpret_cast<const BlockQ5_1*>(row) + k / 32;
    const int j = (int)(k % 32);
    const int q = nibble32(b->qs, j) | ((b->qh[j / 8] >> (j % 8)) & 1) << 4;
    return __fmul_rn((float)q, sy_half_to_float(b->d)) + sy_half_to_float(b->m);
  } else if constexpr (DT == SY_DTYPE_Q2_K) {
    const BlockQ2K* b = reinterpret_cast<const BlockQ2K*>(row) + k / 256;
    const int v = (int)(k % 256), h = v / 128, p = (v / 32) % 4, l = v % 32;
    const int sc = b->scales[v / 16], q = (b->qs[32 * h + l] >> (2 * p)) & 3;
    const float dl = __fmul_rn(sy_half_to_float(b->d), (float)(sc & 15));
    return __fmul_rn(dl, (float)q) - __fmul_rn(sy_half_to_float(b->dmin), (float)(sc >> 4));
  } else if constexpr (DT == SY_DTYPE_Q3_K) {
    const BlockQ3K* b = reinterpret_cast<const BlockQ3K*>(row) + k / 256;
    const int v = (int)(k % 256), h = v / 128, p = (v / 32) % 4, l = v % 32, s = v / 16;
    const int sc = (s < 8 ? b->scales[s] & 15 : b->scales[s - 8] >> 4) |
                   ((b->scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4;
    const int low = (b->qs[32 * h + l] >> (2 * p)) & 3;
    const int q = low - ((b->hmask[l] >> (4 * h + p)) & 1 ? 0 : 4);
    return __fmul_rn(__fmul_rn(sy_half_to_float(b->d), (float)(sc - 32)), (float)q);
  } else if constexpr (DT == SY_DTYPE_Q4_K || DT == SY_DTYPE_Q5_K) {
    // Q4_K and Q5_K share d, dmin and scales at the front; Q5_K adds qh before qs.
    const int64_t block_bytes = DT == SY_DTYPE_Q4_K ? sizeof(BlockQ4K) : sizeof(BlockQ5K);
    const uint8_t* blk = row + (k / 256) * block_bytes;
    const BlockQ4K* b = reinterpret_cast<const BlockQ4K*>(blk);
    const int v = (int)(k % 256), s = v / 32, l = v % 32;
    int sc, mn;
    dtype::unpack_scale_min_k4(s, b->scales, sc, mn);
    const uint8_t* qs = DT == SY_DTYPE_Q4_K ? b->qs : reinterpret_cast<const BlockQ5K*>(blk)->qs;
    const uint8_t byte = qs[32 * (s / 2) + l];
    int q = s % 2 ? byte >> 4 : byte & 15;
    if (DT == SY_DTYPE_Q5_K) q |= ((reinterpret_cast<const BlockQ5K*>(blk)->qh[l] >> s) & 1) << 4;
    const float dl = __fmul_rn(sy_half_to_float(b->d), (float)sc);
    return __fmul_rn(dl, (float)q) - __fmul_rn(sy_half_to_float(b->dmin), (float)mn);
  } else if constexpr (DT == SY_DTYPE_Q6_K) {
    const BlockQ6K* b = reinterpret_cast<const BlockQ6K*>(row) + k / 256;
    const int v = (int)(k % 256), q = dtype::q6k_code(*b, v) - 32;
    return __fmul_rn(__fmul_rn(sy_half_to_float(b->d), (float)b->scales[v / 16]), (float)q);
  } else if constexpr (DT == SY_DTYPE_MXFP4) {
    const BlockMxfp4* b = reinterpret_cast<const BlockMxfp4*>(row) + k / 32;
    // 2^(e - 128), subnormal below e = 2 (ggml_e8m0_to_fp32_half; block_formats.h)
    const uint32_t bits = b->e < 2 ? 0x00200000u << b->e : (uint32_t)(b->e - 1) << 23;
    return __fmul_rn(mxfp4_level(nibble32(b->qs, (int)(k % 32))), __uint_as_float(bits));
  } else {
    static_assert(DT == SY_DTYPE_IQ4_XS, "load_quant: a weight dtype without a GPU decoder");
    const BlockIq4Xs* b = reinterpret_cast<const BlockIq4Xs*>(row) + k / 256;
    const int v = (int)(k % 256), s = v / 32;
    const int ls = ((b->scales_l[s / 2] >> (4 * (s % 2))) & 15) | ((b->scales_h >> (2 * s)) & 3)
                                                                      << 4;
    const float dl = __fmul_rn(sy_half_to_float(b->d), (float)(ls - 32));
    return __fmul_rn(dl, iq4_level(nibble32(b->qs + 16 * s, v % 32)));
  }
}

}  // namespace sy::gpu
