// MXFP4 (OCP microscaling FP4, as gpt-oss files carry their experts): 32 E2M1 codes and one
// E8M0 exponent per block. The quantizer is ggml's quantize_row_mxfp4_ref, what llama-quantize
// runs for it: the exponent floor(log2(max |x|)) - 2 (so the largest level, 6, covers the
// block's max), then each value's nearest level, the first on a tie.
#include <cmath>
#include <cstring>

#include "switchyard/common/dtype.h"

namespace sy::dtype::codec {
namespace {

constexpr int kB = 32;

float e8m0_half(uint8_t e) {
  const uint32_t bits = e8m0_half_bits(e);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// ggml's best_index_mxfp4: the first level of least |level * d - x|.
uint8_t best_index(float x, float d) {
  uint8_t best = 0;
  float best_err = std::fabs((float)kMxfp4Levels[0] * d - x);
  for (uint8_t i = 1; i < 16; ++i) {
    const float err = std::fabs((float)kMxfp4Levels[i] * d - x);
    if (err < best_err) best = i, best_err = err;
  }
  return best;
}

}  // namespace

void mxfp4_to_f32(const void* src, float* dst, int64_t n) {
  const BlockMxfp4* b = static_cast<const BlockMxfp4*>(src);
  for (int64_t i = 0; i < n / kB; ++i, dst += kB) {
    const float d = e8m0_half(b[i].e);
    for (int j = 0; j < kB / 2; ++j) {
      dst[j] = (float)kMxfp4Levels[b[i].qs[j] & 15] * d;
      dst[j + kB / 2] = (float)kMxfp4Levels[b[i].qs[j] >> 4] * d;
    }
  }
}

void mxfp4_from_f32(const float* x, void* dst, int64_t n) {
  BlockMxfp4* y = static_cast<BlockMxfp4*>(dst);
  for (int64_t i = 0; i < n / kB; ++i, x += kB) {
    float amax = 0.0f;
    for (int j = 0; j < kB; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const uint8_t e = amax > 0.0f ? (uint8_t)(std::floor(std::log2(amax)) - 2 + 127) : 0;
    const float d = e8m0_half(e);
    y[i].e = e;
    for (int j = 0; j < kB / 2; ++j)
      y[i].qs[j] = (uint8_t)(best_index(x[j], d) | best_index(x[j + kB / 2], d) << 4);
  }
}

}  // namespace sy::dtype::codec
