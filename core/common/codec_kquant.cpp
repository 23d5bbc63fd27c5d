// Dequantisation of the K-quant super-blocks Q2_K..Q6_K (layouts in block_formats.h). Each
// value is (super-block scale x sub-block scale) x code - (super-block min x sub-block min),
// computed in that order as ggml does, so results are bit-identical to ggml's.
#include <type_traits>

#include "codec_util.h"
#include "switchyard/common/dtype.h"

namespace sy::dtype::codec {
namespace {

constexpr int kQK = kSuperBlock;

// The 6-bit scale of sub-block s (0..15) of a Q3_K block.
inline int q3k_scale(const uint8_t* scales, int s) {
  const int low = s < 8 ? scales[s] & 15 : scales[s - 8] >> 4;
  const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return low | high << 4;
}

}  // namespace

void q2_k_to_f32(const void* src, float* dst, int64_t n) {
  const BlockQ2K* b = static_cast<const BlockQ2K*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = half(b[i].d), dmin = half(b[i].dmin);
    for (int v = 0; v < kQK; ++v) {
      const int h = v / 128, p = (v / 32) % 4, l = v % 32;
      const uint8_t sc = b[i].scales[v / 16];
      const int q = (b[i].qs[32 * h + l] >> (2 * p)) & 3;
      dst[v] = d * (float)(sc & 15) * (float)q - dmin * (float)(sc >> 4);
    }
  }
}

void q3_k_to_f32(const void* src, float* dst, int64_t n) {
  const BlockQ3K* b = static_cast<const BlockQ3K*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = half(b[i].d);
    for (int v = 0; v < kQK; ++v) {
      const int h = v / 128, p = (v / 32) % 4, l = v % 32;
      const int low = (b[i].qs[32 * h + l] >> (2 * p)) & 3;
      const bool high = (b[i].hmask[l] >> (4 * h + p)) & 1;
      const float dl = d * (float)(q3k_scale(b[i].scales, v / 16) - 32);
      dst[v] = dl * (float)(low - (high ? 0 : 4));
    }
  }
}

namespace {

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins; Q5_K adds a fifth code bit.
template <class Block>
void scale_min_k_to_f32(const void* src, float* dst, int64_t n) {
  const Block* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = half(b[i].d), dmin = half(b[i].dmin);
    for (int s = 0; s < 8; ++s) {
      int sc, mn;
      unpack_scale_min_k4(s, b[i].scales, sc, mn);
      const float dl = d * (float)sc, ml = dmin * (float)mn;
      const uint8_t* q = b[i].qs + 32 * (s / 2);
      for (int l = 0; l < 32; ++l) {
        int code = s % 2 ? q[l] >> 4 : q[l] & 15;
        if constexpr (std::is_same_v<Block, BlockQ5K>) code |= ((b[i].qh[l] >> s) & 1) << 4;
        dst[32 * s + l] = dl * (float)code - ml;
      }
    }
  }
}

}  // namespace

void q4_k_to_f32(const void* src, float* dst, int64_t n) {
  scale_min_k_to_f32<BlockQ4K>(src, dst, n);
}

void q5_k_to_f32(const void* src, float* dst, int64_t n) {
  scale_min_k_to_f32<BlockQ5K>(src, dst, n);
}

void q6_k_to_f32(const void* src, float* dst, int64_t n) {
  const BlockQ6K* b = static_cast<const BlockQ6K*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = half(b[i].d);
    for (int v = 0; v < kQK; ++v) {
      const int8_t scale = b[i].scales[v / 16];
      dst[v] = d * (float)scale * (float)(q6k_code(b[i], v) - 32);
    }
  }
}

}  // namespace sy::dtype::codec
