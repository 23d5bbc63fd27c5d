// The 32-value block formats Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0: dequantisation and ggml's
// reference quantizers (quantize_row_*_ref), operation for operation so that the bytes match
// what llama-quantize writes.
#include <algorithm>
#include <cfloat>

#include "codec_util.h"
#include "switchyard/common/dtype.h"

namespace sy::dtype::codec {
namespace {

constexpr int kB = kQ8Block;
constexpr int kHalf = kB / 2;

// The 4-bit code of value j: low nibbles hold values 0..15, high nibbles 16..31.
inline int nibble(const uint8_t* qs, int j) {
  return j < kHalf ? qs[j] & 15 : qs[j - kHalf] >> 4;
}
// The fifth bit of value j of a Q5 block: bit j of the little-endian u32 qh.
inline int fifth_bit(const uint8_t* qh, int j) {
  return (qh[j / 8] >> (j % 8)) & 1;
}

inline void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < kHalf; ++j) qs[j] = (uint8_t)((q[j] & 15) | ((q[j + kHalf] & 15) << 4));
}
inline void pack_fifth_bits(const uint8_t* q, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < kB; ++j) bits |= (uint32_t)((q[j] >> 4) & 1) << j;
  for (int b = 0; b < 4; ++b) qh[b] = (uint8_t)(bits >> (8 * b));
}

struct MinMax {
  float min = FLT_MAX, max = -FLT_MAX;
};
inline MinMax min_max(const float* x) {
  MinMax r;
  for (int j = 0; j < kB; ++j) {
    if (x[j] < r.min) r.min = x[j];
    if (x[j] > r.max) r.max = x[j];
  }
  return r;
}

// Offset codes of Q4_0 / Q5_0 (levels 16 or 32): d = the extreme value / -(levels / 2), so it
// maps to code 0 exactly; code = x / d + levels / 2, truncated after adding 0.5, capped.
float offset_codes(const float* x, int levels, uint8_t* q) {
  const float half_range = (float)(levels / 2);
  const float d = abs_max(x, kB).value / -half_range;
  const float id = d ? 1.0f / d : 0.0f;
  for (int j = 0; j < kB; ++j)
    q[j] = (uint8_t)std::min<int>(levels - 1, (int8_t)(x[j] * id + (half_range + 0.5f)));
  return d;
}

// Min-offset codes of Q4_1 / Q5_1: d = (max - min) / (levels - 1), code = (x - min) / d
// rounded half up. Returns d; min receives the block's minimum.
float min_offset_codes(const float* x, int levels, uint8_t* q, float& min) {
  const MinMax r = min_max(x);
  const float d = (r.max - r.min) / (float)(levels - 1);
  const float id = d ? 1.0f / d : 0.0f;
  for (int j = 0; j < kB; ++j)
    q[j] = (uint8_t)std::min<int>(levels - 1, (int8_t)((x[j] - r.min) * id + 0.5f));
  min = r.min;
  return d;
}

// Q5 blocks keep each code's fifth bit in qh; Q4 blocks have none.
template <class Block>
constexpr bool kFifthBit = requires(const Block& b) { b.qh; };

// The code of value j of a Q4 or Q5 block.
template <class Block>
int code(const Block& b, int j) {
  if constexpr (kFifthBit<Block>)
    return nibble(b.qs, j) | fifth_bit(b.qh, j) << 4;
  else
    return nibble(b.qs, j);
}
template <class Block>
void pack_codes(const uint8_t* q, Block& b) {
  pack_nibbles(q, b.qs);
  if constexpr (kFifthBit<Block>) pack_fifth_bits(q, b.qh);
}

// Q4_0 / Q5_0 (levels 16 / 32): x = (code - levels / 2) * d.
template <class Block, int kLevels>
void offset_to_f32(const void* src, float* dst, int64_t n) {
  const Block* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / kB; ++i, dst += kB) {
    const float d = half(b[i].d);
    constexpr int kZero = kLevels / 2;  // the code of 0
    for (int j = 0; j < kB; ++j) dst[j] = (float)(code(b[i], j) - kZero) * d;
  }
}
template <class Block, int kLevels>
void offset_from_f32(const float* x, void* dst, int64_t n) {
  Block* y = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / kB; ++i, x += kB) {
    uint8_t q[kB];
    y[i].d = to_half(offset_codes(x, kLevels, q));
    pack_codes(q, y[i]);
  }
}

// Q4_1 / Q5_1: x = code * d + m.
template <class Block>
void min_offset_to_f32(const void* src, float* dst, int64_t n) {
  const Block* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / kB; ++i, dst += kB) {
    const float d = half(b[i].d), m = half(b[i].m);
    for (int j = 0; j < kB; ++j) dst[j] = (float)code(b[i], j) * d + m;
  }
}
// ggml does not cap Q5_1's codes, but (max - min) / d stays below 31.5, so the cap never acts.
template <class Block, int kLevels>
void min_offset_from_f32(const float* x, void* dst, int64_t n) {
  Block* y = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / kB; ++i, x += kB) {
    uint8_t q[kB];
    float min;
    y[i].d = to_half(min_offset_codes(x, kLevels, q, min));
    y[i].m = to_half(min);
    pack_codes(q, y[i]);
  }
}

}  // namespace

void q4_0_to_f32(const void* src, float* dst, int64_t n) {
  offset_to_f32<BlockQ4_0, 16>(src, dst, n);
}
void q4_0_from_f32(const float* x, void* dst, int64_t n) {
  offset_from_f32<BlockQ4_0, 16>(x, dst, n);
}
void q4_1_to_f32(const void* src, float* dst, int64_t n) {
  min_offset_to_f32<BlockQ4_1>(src, dst, n);
}
void q4_1_from_f32(const float* x, void* dst, int64_t n) {
  min_offset_from_f32<BlockQ4_1, 16>(x, dst, n);
}
void q5_0_to_f32(const void* src, float* dst, int64_t n) {
  offset_to_f32<BlockQ5_0, 32>(src, dst, n);
}
void q5_0_from_f32(const float* x, void* dst, int64_t n) {
  offset_from_f32<BlockQ5_0, 32>(x, dst, n);
}
void q5_1_to_f32(const void* src, float* dst, int64_t n) {
  min_offset_to_f32<BlockQ5_1>(src, dst, n);
}
void q5_1_from_f32(const float* x, void* dst, int64_t n) {
  min_offset_from_f32<BlockQ5_1, 32>(x, dst, n);
}

void q8_0_to_f32(const void* src, float* dst, int64_t n) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kB; ++i, dst += kB) {
    const float d = half(b[i].d);
    for (int j = 0; j < kB; ++j) dst[j] = (float)b[i].qs[j] * d;
  }
}
// d = amax / 127, q = round(x / d), ties away from zero.
void q8_0_from_f32(const float* x, void* dst, int64_t n) {
  BlockQ8_0* y = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kB; ++i, x += kB) {
    const float d = abs_max(x, kB).abs / 127;
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = to_half(d);
    for (int j = 0; j < kB; ++j) y[i].qs[j] = (int8_t)std::round(x[j] * id);
  }
}

}  // namespace sy::dtype::codec
