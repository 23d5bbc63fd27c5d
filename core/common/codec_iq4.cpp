// IQ4_NL (32-value blocks) and IQ4_XS (256-value super-blocks of 8 x 32): 4-bit codes indexing
// the non-linear levels kIq4nlLevels. The quantizers are ggml's quantize_iq4_nl /
// quantize_iq4_xs without an importance matrix (what llama-quantize runs for these types): a
// per-block scale fitted by x^2-weighted least squares over 15 trial scales, and for IQ4_XS the
// block scales quantised to 6 bits against one f16 super-scale.
#include <cstring>

#include "codec_util.h"
#include "switchyard/common/dtype.h"

namespace sy::dtype::codec {
namespace {

constexpr int kB = 32;
constexpr int kTrials = 7;  // trial inverse scales (levels[0] + t) / max, t in [-7, 7]

// Index of the level nearest to v (the upper one on an exact tie), by bisection.
int nearest_level(float v) {
  const int8_t* lv = kIq4nlLevels;
  if (v <= lv[0]) return 0;
  if (v >= lv[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (v < lv[mid] ? hi : lo) = mid;
  }
  return v - lv[hi - 1] < lv[hi] - v ? hi - 1 : hi;
}

// The least-squares scale of one block of 32 values (0 for an all-zero block); codes in L.
float fit_block(const float* x, uint8_t* L) {
  const AbsMax m = abs_max(x, kB);
  if (m.abs < 1e-15f) {
    for (int j = 0; j < kB; ++j) L[j] = 0;  // unused: the block's scale is 0
    return 0.0f;
  }
  float w[kB];
  for (int j = 0; j < kB; ++j) w[j] = x[j] * x[j];
  const int8_t* lv = kIq4nlLevels;
  float d = -m.value / lv[0];
  float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int j = 0; j < kB; ++j) {
    L[j] = (uint8_t)nearest_level(id * x[j]);
    const float q = lv[L[j]];
    sumqx += w[j] * q * x[j];
    sumq2 += w[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int t = -kTrials; t <= kTrials; ++t) {
    id = (t + lv[0]) / m.value;
    sumqx = sumq2 = 0;
    for (int j = 0; j < kB; ++j) {
      const float q = lv[nearest_level(id * x[j])];
      sumqx += w[j] * q * x[j];
      sumq2 += w[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

inline int nibble(const uint8_t* qs, int j) {
  return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
}
void pack_nibbles(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
}

}  // namespace

void iq4_nl_to_f32(const void* src, float* dst, int64_t n) {
  const BlockIq4Nl* b = static_cast<const BlockIq4Nl*>(src);
  for (int64_t i = 0; i < n / kB; ++i, dst += kB) {
    const float d = half(b[i].d);
    for (int j = 0; j < kB; ++j) dst[j] = d * (float)kIq4nlLevels[nibble(b[i].qs, j)];
  }
}
void iq4_nl_from_f32(const float* x, void* dst, int64_t n) {
  BlockIq4Nl* y = static_cast<BlockIq4Nl*>(dst);
  for (int64_t i = 0; i < n / kB; ++i, x += kB) {
    uint8_t L[kB];
    const float d = fit_block(x, L);
    y[i].d = to_half(d);
    const float id = d ? 1 / d : 0;  // re-pick the codes for the fitted scale
    for (int j = 0; j < kB; ++j) L[j] = (uint8_t)nearest_level(id * x[j]);
    pack_nibbles(L, y[i].qs);
  }
}

void iq4_xs_to_f32(const void* src, float* dst, int64_t n) {
  const BlockIq4Xs* b = static_cast<const BlockIq4Xs*>(src);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const float d = half(b[i].d);
    for (int s = 0; s < 8; ++s, dst += kB) {
      const int ls =
          ((b[i].scales_l[s / 2] >> (4 * (s % 2))) & 15) | ((b[i].scales_h >> (2 * s)) & 3) << 4;
      const float dl = d * (float)(ls - 32);
      for (int j = 0; j < kB; ++j) dst[j] = dl * (float)kIq4nlLevels[nibble(b[i].qs + 16 * s, j)];
    }
  }
}
void iq4_xs_from_f32(const float* x, void* dst, int64_t n) {
  BlockIq4Xs* y = static_cast<BlockIq4Xs*>(dst);
  for (int64_t i = 0; i < n / kSuperBlock; ++i, x += kSuperBlock) {
    uint8_t L[kSuperBlock];
    float scales[8];
    float max_scale = 0, amax_scale = 0;  // the signed block scale of largest magnitude
    for (int s = 0; s < 8; ++s) {
      scales[s] = fit_block(x + kB * s, L + kB * s);
      if (std::fabs(scales[s]) > amax_scale)
        amax_scale = std::fabs(scales[s]), max_scale = scales[s];
    }
    const float d = -max_scale / 32;
    y[i].d = to_half(d);
    const float id = d ? 1 / d : 0.f;
    y[i].scales_h = 0;
    std::memset(y[i].scales_l, 0, sizeof y[i].scales_l);
    for (int s = 0; s < 8; ++s) {
      int l = nearest_int(id * scales[s]);
      l = l < -32 ? -32 : l > 31 ? 31 : l;
      const float dl = d * l;
      const float idl = dl ? 1 / dl : 0.f;
      for (int j = 0; j < kB; ++j) L[kB * s + j] = (uint8_t)nearest_level(idl * x[kB * s + j]);
      l += 32;
      y[i].scales_l[s / 2] |= (uint8_t)((l & 15) << (4 * (s % 2)));
      y[i].scales_h |= (uint16_t)((l >> 4) << (2 * s));
    }
    for (int s = 0; s < 8; ++s) pack_nibbles(L + kB * s, y[i].qs + 16 * s);
  }
}

}  // namespace sy::dtype::codec
