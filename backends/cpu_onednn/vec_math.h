// AVX2 helpers shared by the element-wise ops (include only from files built with -mavx2 -mfma
// -mf16c): thin names over the avx2 kernel path's vector layer, so both use one exp and one
// set of conversions.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "switchyard/common/half.h"

namespace sy::cpu_onednn {
namespace vec {
#include "kernels/simd_avx2.h"
}  // namespace vec

inline float hsum(__m256 v) {
  return vec::Simd::hsum(v);
}
inline float hmax(__m256 v) {
  return vec::Simd::hmax(v);
}
// 8 F16 / BF16 values at p as F32.
inline __m256 load_f16x8(const uint16_t* p) {
  return vec::Simd::load_f16(p);
}
inline __m256 load_bf16x8(const uint16_t* p) {
  return vec::Simd::load_bf16(p);
}
inline float f16_scalar(uint16_t h) {
  return vec::Simd::f16_scalar(h);
}
inline float bf16_scalar(uint16_t h) {
  return dtype::bf16_to_f32(h);
}
// exp(x): about 2 ulp for normal results; 0 below -88.37, inf above 88.72, NaN stays NaN.
inline __m256 exp_ps(__m256 x) {
  return vec::Simd::exp(x);
}

// The 32 int8 quants of a Q8_0 block as four vectors of 8 F32 values.
inline void load_q8x32(const int8_t* q, __m256 out[4]) {
  const __m128i lo = _mm_loadu_si128((const __m128i*)q);
  const __m128i hi = _mm_loadu_si128((const __m128i*)(q + 16));
  out[0] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo));
  out[1] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)));
  out[2] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi));
  out[3] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)));
}

}  // namespace sy::cpu_onednn
