// An independent decoder of ggml's block formats for the tests, written from ggml-common.h's
// layouts: it reads raw bytes at ggml's field offsets (no library structs or codecs), so a wrong
// struct field order, bit position, sign or scale packing in the library shows as a mismatch.
// Each value is computed with ggml's arithmetic (super-scale x sub-scale x code - super-min x
// sub-min, in float, in that order), so a correct library agrees bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "switchyard/abi/types.h"

namespace sy::test::oracle {

inline float half_to_float(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return (float)v;
}
inline float half_at(const uint8_t* p) {
  return half_to_float((uint16_t)(p[0] | p[1] << 8));
}

constexpr int kLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                             1,    13,   25,  38,  53,  69,  89,  113};

struct Format {
  int values, bytes;
};
// ggml's block sizes, spelled out here rather than read from the library's table.
inline Format format(uint32_t t) {
  switch (t) {
    case SY_DTYPE_Q4_0:
      return {32, 18};
    case SY_DTYPE_Q4_1:
      return {32, 20};
    case SY_DTYPE_Q5_0:
      return {32, 22};
    case SY_DTYPE_Q5_1:
      return {32, 24};
    case SY_DTYPE_Q8_0:
      return {32, 34};
    case SY_DTYPE_IQ4_NL:
      return {32, 18};
    case SY_DTYPE_MXFP4:
      return {32, 17};
    case SY_DTYPE_Q2_K:
      return {256, 84};
    case SY_DTYPE_Q3_K:
      return {256, 110};
    case SY_DTYPE_Q4_K:
      return {256, 144};
    case SY_DTYPE_Q5_K:
      return {256, 176};
    case SY_DTYPE_Q6_K:
      return {256, 210};
    case SY_DTYPE_IQ4_XS:
      return {256, 136};
    default:
      return {0, 0};
  }
}

// Value v of the 32-value block at b.
inline float decode32(uint32_t t, const uint8_t* b, int v) {
  // The 4-bit code: value v < 16 in the low nibble of byte v of qs, v >= 16 in the high
  // nibble of byte v - 16.
  auto code4 = [](const uint8_t* qs, int v) { return v < 16 ? qs[v] % 16 : qs[v - 16] / 16; };
  auto bit5 = [](const uint8_t* qh, int v) {
    const uint32_t h =
        (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
    return (int)((h >> v) & 1u) * 16;
  };
  switch (t) {
    case SY_DTYPE_Q4_0:
      return (float)(code4(b + 2, v) - 8) * half_at(b);
    case SY_DTYPE_Q4_1:
      return (float)code4(b + 4, v) * half_at(b) + half_at(b + 2);
    case SY_DTYPE_Q5_0:
      return (float)(code4(b + 6, v) + bit5(b + 2, v) - 16) * half_at(b);
    case SY_DTYPE_Q5_1:
      return (float)(code4(b + 8, v) + bit5(b + 4, v)) * half_at(b) + half_at(b + 2);
    case SY_DTYPE_Q8_0:
      return (float)(int8_t)b[2 + v] * half_at(b);
    case SY_DTYPE_IQ4_NL:
      return half_at(b) * (float)kLevels[code4(b + 2, v)];
    case SY_DTYPE_MXFP4: {  // e (E8M0, bias 127) qs[16]: E2M1 codes, bit 3 the sign
      constexpr float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
      const int c = code4(b + 1, v);
      const float m = c & 8 ? -kE2m1[c & 7] + 0.0f : kE2m1[c & 7];  // -0 decodes as +0 (ggml)
      return std::ldexp(m, (int)b[0] - 127);  // one rounding, as ggml's exact 2^k product
    }
    default:
      return 0;
  }
}

// Value v (0..255) of the super-block at b. Where a format packs 2-bit planes, v is
// 128 * half + 32 * plane + lane.
inline float decode256(uint32_t t, const uint8_t* b, int v) {
  const int half = v / 128, plane = (v % 128) / 32, lane = v % 32;
  switch (t) {
    case SY_DTYPE_Q2_K: {  // scales[16] qs[64] d dmin
      const uint8_t sc = b[v / 16];
      const int q = (b[16 + 32 * half + lane] >> (2 * plane)) & 3;
      return half_at(b + 80) * (float)(sc % 16) * (float)q - half_at(b + 82) * (float)(sc / 16);
    }
    case SY_DTYPE_Q3_K: {  // hmask[32] qs[64] scales[12] d
      const int s = v / 16;
      const uint8_t* scales = b + 96;
      const int low = (scales[s % 8] >> (4 * (s / 8))) & 15;      // nibble s / 8 of byte s % 8
      const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;  // 2 bits of bytes 8..11
      const int scale = (low + 16 * high) - 32;                   // signed 6 bits
      const int q2 = (b[32 + 32 * half + lane] >> (2 * plane)) & 3;
      const bool hbit = (b[lane] >> (4 * half + plane)) & 1;  // hmask[lane], bit v / 32
      return half_at(b + 108) * (float)scale * (float)(q2 - (hbit ? 0 : 4));
    }
    case SY_DTYPE_Q4_K:
    case SY_DTYPE_Q5_K: {  // d dmin scales[12] (Q5_K: qh[32]) qs[128]
      const int s = v / 32, l = v % 32;
      const uint8_t* sm = b + 4;
      // Sub-blocks 0..3: 6-bit scale in byte s, min in byte s + 4. Sub-blocks 4..7: low 4 bits
      // in the nibbles of byte s + 4, high 2 bits in the top bits of bytes s - 4 (scale) and s
      // (min).
      int scale, min;
      if (s < 4) {
        scale = sm[s] % 64;
        min = sm[s + 4] % 64;
      } else {
        scale = sm[s + 4] % 16 + 16 * (sm[s - 4] / 64);
        min = sm[s + 4] / 16 + 16 * (sm[s] / 64);
      }
      const uint8_t* qs = b + (t == SY_DTYPE_Q4_K ? 16 : 48);
      const uint8_t byte = qs[32 * (s / 2) + l];
      int q = s % 2 == 0 ? byte % 16 : byte / 16;
      if (t == SY_DTYPE_Q5_K) q += 16 * ((b[16 + l] >> s) & 1);
      return half_at(b) * (float)scale * (float)q - half_at(b + 2) * (float)min;
    }
    case SY_DTYPE_Q6_K: {  // ql[128] qh[64] scales[16] (int8) d
      const uint8_t ql = b[64 * half + lane + (plane % 2) * 32];
      const int low = plane < 2 ? ql % 16 : ql / 16;
      const int high = (b[128 + 32 * half + lane] >> (2 * plane)) & 3;
      return half_at(b + 208) * (float)(int8_t)b[192 + v / 16] * (float)(low + 16 * high - 32);
    }
    case SY_DTYPE_IQ4_XS: {  // d scales_h(u16) scales_l[4] qs[128]
      const int s = v / 32, l = v % 32;
      const int scales_h = b[2] | b[3] << 8;
      const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 15) + 16 * ((scales_h >> (2 * s)) & 3);
      const uint8_t* qs = b + 8 + 16 * s;
      const int code = l < 16 ? qs[l] % 16 : qs[l - 16] / 16;
      return half_at(b) * (float)(ls - 32) * (float)kLevels[code];
    }
    default:
      return 0;
  }
}

// n values of type t at p (whole blocks), decoded.
inline std::vector<float> decode(uint32_t t, const uint8_t* p, int64_t n) {
  const Format f = format(t);
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* b = p + (i / f.values) * f.bytes;
    out[i] = f.values == 32 ? decode32(t, b, (int)(i % 32)) : decode256(t, b, (int)(i % 256));
  }
  return out;
}

inline bool is_block_type(uint32_t t) {
  return format(t).values != 0;
}

}  // namespace sy::test::oracle
