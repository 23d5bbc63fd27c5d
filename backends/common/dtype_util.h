// Element-type helpers shared by the host and the in-tree backends (header only, no host types):
// sizes, F16/BF16 conversion and the Q8_0 block format, bit-compatible with ggml.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "switchyard/abi/types.h"

namespace sy::dtype {

constexpr int kQ8Block = 32;  // values per Q8_0 block

struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQ8Block];
};
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block must be 34 bytes as in ggml");

// Values per block and bytes per block; 0 for an unknown type.
inline int64_t block_elems(uint32_t t) {
  switch (t) {
    case SY_DTYPE_F32: case SY_DTYPE_F16: case SY_DTYPE_BF16: case SY_DTYPE_I32: return 1;
    case SY_DTYPE_Q8_0: return kQ8Block;
    default: return 0;
  }
}
inline int64_t block_bytes(uint32_t t) {
  switch (t) {
    case SY_DTYPE_F32: case SY_DTYPE_I32: return 4;
    case SY_DTYPE_F16: case SY_DTYPE_BF16: return 2;
    case SY_DTYPE_Q8_0: return sizeof(BlockQ8_0);
    default: return 0;
  }
}
inline bool is_known(uint32_t t) { return block_elems(t) != 0; }
inline const char* name(uint32_t t) {
  switch (t) {
    case SY_DTYPE_F32: return "F32";
    case SY_DTYPE_F16: return "F16";
    case SY_DTYPE_BF16: return "BF16";
    case SY_DTYPE_Q8_0: return "Q8_0";
    case SY_DTYPE_I32: return "I32";
    default: return "unknown";
  }
}
// Bytes of one row of n values; caller guarantees n % block_elems == 0.
inline int64_t row_bytes(uint32_t t, int64_t n) { return n / block_elems(t) * block_bytes(t); }

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, as the hardware conversion does.
inline uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // overflow to inf
  if (absx < 0x38800000u) {                                    // subnormal or zero in f16
    if (absx < 0x33000000u) return (uint16_t)sign;
    // value = M * 2^(e-150) and an f16 subnormal is q * 2^-24, so q = M >> (126 - e).
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    uint32_t q = m >> shift;
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return (uint16_t)(sign | q);
  }
  uint32_t r = absx - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (uint16_t)(sign | r);
}

inline float bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 64u);  // quiet NaN
  return (uint16_t)((x + (0x7fffu + ((x >> 16) & 1u))) >> 16);
}

// ggml's quantize_row_q8_0_ref: d = amax/127, q = round(x/d).
inline void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQ8Block; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < kQ8Block; ++j) amax = std::fmax(amax, std::fabs(x[b * kQ8Block + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = f32_to_f16(d);
    for (int j = 0; j < kQ8Block; ++j) y[b].qs[j] = (int8_t)std::lround(x[b * kQ8Block + j] * id);
  }
}

// Converts one row of n values of type t at src to F32.
inline void row_to_f32(uint32_t t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case SY_DTYPE_F32: std::memcpy(dst, src, (size_t)n * 4); break;
    case SY_DTYPE_F16: {
      const uint16_t* s = (const uint16_t*)src;
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      break;
    }
    case SY_DTYPE_BF16: {
      const uint16_t* s = (const uint16_t*)src;
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      break;
    }
    case SY_DTYPE_Q8_0: {
      const BlockQ8_0* b = (const BlockQ8_0*)src;
      for (int64_t i = 0; i < n / kQ8Block; ++i) {
        const float d = f16_to_f32(b[i].d);
        for (int j = 0; j < kQ8Block; ++j) dst[i * kQ8Block + j] = d * b[i].qs[j];
      }
      break;
    }
    default: break;
  }
}

// Converts n F32 values to one row of type t at dst (n % block_elems(t) == 0).
inline void row_from_f32(uint32_t t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case SY_DTYPE_F32: std::memcpy(dst, src, (size_t)n * 4); break;
    case SY_DTYPE_F16: {
      uint16_t* d = (uint16_t*)dst;
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]);
      break;
    }
    case SY_DTYPE_BF16: {
      uint16_t* d = (uint16_t*)dst;
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
      break;
    }
    case SY_DTYPE_Q8_0: quantize_row_q8_0(src, (BlockQ8_0*)dst, n); break;
    default: break;
  }
}

}  // namespace sy::dtype
