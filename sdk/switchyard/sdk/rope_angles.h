// The angles of llama.cpp's RoPE (ggml_rope_ext with frequency factors and YaRN), computed in F32
// in ggml's order so that the CPU backends reproduce its theta exactly: a frequency factor near 0
// makes angles of thousands of radians, where any other rounding order is visibly off.
#pragma once

#include <algorithm>
#include <cmath>

#include "switchyard/sdk/backend.h"

namespace sy::plugin {

// YaRN's correction range [lo, hi] of pair indices (ggml_rope_yarn_corr_dims).
struct YarnRamp {
  float lo = 0, hi = 0;
  explicit YarnRamp(const RopeExtOp& op) {
    auto dim = [&](float beta) {
      return (float)op.n_rot * std::log((float)op.n_ctx_orig / (beta * 2 * (float)M_PI)) /
             (2 * std::log(op.freq_base));
    };
    lo = std::max(0.0f, std::floor(dim(op.beta_fast)));
    hi = std::min((float)op.n_rot - 1, std::ceil(dim(op.beta_slow)));
  }
  // The share of the extrapolated angle for pair i.
  float mix(uint32_t i, float ext_factor) const {
    const float y = ((float)i - lo) / std::max(0.001f, hi - lo);
    return (1 - std::min(1.0f, std::max(0.0f, y))) * ext_factor;
  }
};

// cs[2i], cs[2i + 1] = cos and sin of pair i at position p, times the magnitude factor.
inline void rope_ext_angles(const RopeExtOp& op, const YarnRamp& ramp, int32_t p, float* cs) {
  const float theta_scale = std::pow(op.freq_base, -2.0f / (float)op.n_rot);
  float theta = (float)p;
  for (uint32_t i = 0; i < op.n_rot / 2; ++i) {
    const float extrap = theta / (op.freq_factors ? op.freq_factors[i] : 1.0f);
    float th = op.freq_scale * extrap;
    float mscale = op.attn_factor;
    if (op.ext_factor != 0.0f) {
      const float mix = ramp.mix(i, op.ext_factor);
      th = th * (1 - mix) + extrap * mix;
      mscale *= 1.0f + 0.1f * std::log(1.0f / op.freq_scale);
    }
    cs[2 * i] = std::cos(th) * mscale;
    cs[2 * i + 1] = std::sin(th) * mscale;
    theta *= theta_scale;
  }
}

}  // namespace sy::plugin
