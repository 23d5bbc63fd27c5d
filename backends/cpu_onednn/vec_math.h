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

// tanh(x) = sign(x) (1 - e) / (1 + e), e = e^(-2|x|); below |x| = 1/4, where 1 - e cancels,
// its Taylor series to x^9 (relative error under 1e-8 there).
inline __m256 tanh_ps(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 e = exp_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), a));
  const __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  const __m256 a2 = _mm256_mul_ps(a, a);
  __m256 p = _mm256_set1_ps(62.0f / 2835.0f);
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(-17.0f / 315.0f));
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(2.0f / 15.0f));
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, a2), a, a);
  const __m256 t =
      _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.25f), _CMP_LT_OQ));
  return _mm256_or_ps(t, _mm256_and_ps(sign, x));
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
