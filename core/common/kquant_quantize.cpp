// ggml's reference quantizers of the K-quant super-blocks (quantize_row_q{2..6}_K_ref): what
// llama-quantize writes without an importance matrix. Per super-block: fit each sub-block's
// scale (and min), quantise those to 4/6/8 bits against one f16 super-scale, then recompute the
// codes against the rounded scales so they decode as closely as possible.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "codec_util.h"
#include "scale_search.h"
#include "switchyard/common/dtype.h"

namespace sy::dtype::codec {
namespace {

constexpr int kQK = kSuperBlock;

inline int clamp(int v, int lo, int hi) {
  return std::max(lo, std::min(hi, v));
}

// Packs 2-bit codes (each < 4) as the Q2_K/Q3_K qs: value 128h + 32p + l in bits 2p of byte
// 32h + l.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const uint8_t* v = L + 128 * h + l;
      qs[32 * h + l] = (uint8_t)(v[0] | v[32] << 2 | v[64] << 4 | v[96] << 6);
    }
}

// The 6-bit scale and min of sub-block s into the 12-byte Q4_K/Q5_K scales (the inverse of
// unpack_scale_min_k4).
void pack_scale_min_k4(int s, int sc, int mn, uint8_t* scales) {
  if (s < 4) {
    scales[s] = (uint8_t)sc;
    scales[s + 4] = (uint8_t)mn;
  } else {
    scales[s + 4] = (uint8_t)((sc & 15) | (mn & 15) << 4);
    scales[s - 4] |= (uint8_t)((sc >> 4) << 6);
    scales[s] |= (uint8_t)((mn >> 4) << 6);
  }
}

// Q4_K and Q5_K share everything but the code width (nmax 15 or 31) and the search grid.
struct AsymmetricK {
  int nmax;
  float rmin;
  int nstep;
};

// Fits the 8 sub-blocks of 32 and writes d, dmin and scales of the block; returns the final
// codes in L.
void quantize_asymmetric_k(const float* x, const AsymmetricK& f, uint16_t& d_out,
                           uint16_t& dmin_out, uint8_t* scales_out, uint8_t* L) {
  float scales[8], mins[8], weights[32];
  float max_scale = 0, max_min = 0;  // mins are subtracted, so both are >= 0
  for (int s = 0; s < 8; ++s) {
    const float* xs = x + 32 * s;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[s] =
        scale_and_min(32, f.nmax, xs, weights, L + 32 * s, &mins[s], f.rmin, 0.1f, f.nstep, false);
    max_scale = std::max(max_scale, scales[s]);
    max_min = std::max(max_min, mins[s]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::memset(scales_out, 0, 12);
  for (int s = 0; s < 8; ++s) {
    const uint8_t ls = (uint8_t)nearest_int(inv_scale * scales[s]);
    const uint8_t lm = (uint8_t)nearest_int(inv_min * mins[s]);
    pack_scale_min_k4(s, std::min<int>(63, ls), std::min<int>(63, lm), scales_out);
  }
  d_out = to_half(max_scale / 63.f);
  dmin_out = to_half(max_min / 63.f);
  for (int s = 0; s < 8; ++s) {
    int sc, mn;
    unpack_scale_min_k4(s, scales_out, sc, mn);
    const float d = half(d_out) * sc;
    if (!d) continue;
    const float dm = half(dmin_out) * mn;
    for (int l = 0; l < 32; ++l)
      L[32 * s + l] = (uint8_t)clamp(nearest_int((x[32 * s + l] + dm) / d), 0, f.nmax);
  }
}

}  // namespace

void q2_k_from_f32(const float* x, void* dst, int64_t n) {
  BlockQ2K* y = static_cast<BlockQ2K*>(dst);
  constexpr float kQ4Scale = 15.f;  // sub-block scales and mins are 4 bits
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    uint8_t L[kQK];
    float scales[16], mins[16], weights[16];
    float max_scale = 0, max_min = 0;
    for (int s = 0; s < 16; ++s) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * s + l]);
      scales[s] =
          scale_and_min(16, 3, x + 16 * s, weights, L + 16 * s, &mins[s], -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[s]);
      max_min = std::max(max_min, mins[s]);
    }
    if (max_scale > 0) {
      const float iscale = kQ4Scale / max_scale;
      for (int s = 0; s < 16; ++s) y[i].scales[s] = (uint8_t)nearest_int(iscale * scales[s]);
      y[i].d = to_half(max_scale / kQ4Scale);
    } else {
      std::memset(y[i].scales, 0, 16);
      y[i].d = to_half(0.f);
    }
    if (max_min > 0) {
      const float iscale = kQ4Scale / max_min;
      for (int s = 0; s < 16; ++s) y[i].scales[s] |= (uint8_t)(nearest_int(iscale * mins[s]) << 4);
      y[i].dmin = to_half(max_min / kQ4Scale);
    } else {
      y[i].dmin = to_half(0.f);
    }
    for (int s = 0; s < 16; ++s) {
      const float d = half(y[i].d) * (y[i].scales[s] & 15);
      if (!d) continue;
      const float dm = half(y[i].dmin) * (y[i].scales[s] >> 4);
      for (int l = 0; l < 16; ++l)
        L[16 * s + l] = (uint8_t)clamp(nearest_int((x[16 * s + l] + dm) / d), 0, 3);
    }
    pack_2bit(L, y[i].qs);
  }
}

void q3_k_from_f32(const float* x, void* dst, int64_t n) {
  BlockQ3K* y = static_cast<BlockQ3K*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    int8_t L[kQK];
    float scales[16];
    float max_scale = 0, amax = 0;  // the signed scale of largest magnitude
    for (int s = 0; s < 16; ++s) {
      scales[s] = q3_scale(16, 4, x + 16 * s, L + 16 * s);
      if (std::fabs(scales[s]) > amax) amax = std::fabs(scales[s]), max_scale = scales[s];
    }
    std::memset(y[i].scales, 0, 12);
    if (max_scale) {
      const float iscale = -32.f / max_scale;
      for (int s = 0; s < 16; ++s) {
        int8_t l = (int8_t)nearest_int(iscale * scales[s]);
        l = (int8_t)(clamp(l, -32, 31) + 32);
        if (s < 8)
          y[i].scales[s] = (uint8_t)(l & 15);
        else
          y[i].scales[s - 8] |= (uint8_t)((l & 15) << 4);
        y[i].scales[8 + s % 4] |= (uint8_t)((l >> 4) << (2 * (s / 4)));
      }
      y[i].d = to_half(1 / iscale);
    } else {
      y[i].d = to_half(0.f);
    }
    for (int s = 0; s < 16; ++s) {
      const int low = s < 8 ? y[i].scales[s] & 15 : y[i].scales[s - 8] >> 4;
      const int sc = (int8_t)((low | ((y[i].scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4) - 32);
      const float d = half(y[i].d) * sc;
      if (!d) continue;
      for (int l = 0; l < 16; ++l)
        L[16 * s + l] = (int8_t)(clamp(nearest_int(x[16 * s + l] / d), -4, 3) + 4);
    }
    // Codes 4..7 keep their high bit in hmask: bit (v / 32) of hmask[v % 32].
    std::memset(y[i].hmask, 0, 32);
    uint8_t low2[kQK];
    for (int v = 0; v < kQK; ++v) {
      if (L[v] > 3) y[i].hmask[v % 32] |= (uint8_t)(1 << (v / 32));
      low2[v] = (uint8_t)(L[v] > 3 ? L[v] - 4 : L[v]);
    }
    pack_2bit(low2, y[i].qs);
  }
}

void q4_k_from_f32(const float* x, void* dst, int64_t n) {
  BlockQ4K* y = static_cast<BlockQ4K*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    uint8_t L[kQK];
    quantize_asymmetric_k(x, {15, -1.f, 20}, y[i].d, y[i].dmin, y[i].scales, L);
    for (int s2 = 0; s2 < 4; ++s2)
      for (int l = 0; l < 32; ++l)
        y[i].qs[32 * s2 + l] = (uint8_t)(L[64 * s2 + l] | L[64 * s2 + 32 + l] << 4);
  }
}

void q5_k_from_f32(const float* x, void* dst, int64_t n) {
  BlockQ5K* y = static_cast<BlockQ5K*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    uint8_t L[kQK];
    quantize_asymmetric_k(x, {31, -0.5f, 15}, y[i].d, y[i].dmin, y[i].scales, L);
    std::memset(y[i].qh, 0, 32);
    for (int s2 = 0; s2 < 4; ++s2)
      for (int l = 0; l < 32; ++l) {
        const int lo = L[64 * s2 + l], hi = L[64 * s2 + 32 + l];
        y[i].qs[32 * s2 + l] = (uint8_t)((lo & 15) | (hi & 15) << 4);
        y[i].qh[l] |= (uint8_t)((lo >> 4) << (2 * s2) | (hi >> 4) << (2 * s2 + 1));
      }
  }
}

void q6_k_from_f32(const float* x, void* dst, int64_t n) {
  BlockQ6K* y = static_cast<BlockQ6K*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    int8_t L[kQK];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    for (int s = 0; s < 16; ++s) {
      scales[s] = symmetric_scale(16, 32, x + 16 * s, L + 16 * s, true, nullptr);
      if (std::fabs(scales[s]) > max_abs_scale)
        max_abs_scale = std::fabs(scales[s]), max_scale = scales[s];
    }
    if (max_abs_scale < 1e-15f) {  // an all-zero block
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    const float iscale = -128.f / max_scale;
    y[i].d = to_half(1 / iscale);
    for (int s = 0; s < 16; ++s)
      y[i].scales[s] = (int8_t)std::min(127, nearest_int(iscale * scales[s]));
    for (int s = 0; s < 16; ++s) {
      const float d = half(y[i].d) * y[i].scales[s];
      if (!d) continue;
      for (int l = 0; l < 16; ++l)
        L[16 * s + l] = (int8_t)(clamp(nearest_int(x[16 * s + l] / d), -32, 31) + 32);
    }
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l) {
        const int8_t* v = L + 128 * h + l;
        y[i].ql[64 * h + l] = (uint8_t)((v[0] & 15) | (v[64] & 15) << 4);
        y[i].ql[64 * h + l + 32] = (uint8_t)((v[32] & 15) | (v[96] & 15) << 4);
        y[i].qh[32 * h + l] =
            (uint8_t)((v[0] >> 4) | (v[32] >> 4) << 2 | (v[64] >> 4) << 4 | (v[96] >> 4) << 6);
      }
  }
}

}  // namespace sy::dtype::codec
