// The gated delta net mixer of Qwen3-Next and Qwen3.5/3.6 (llama.cpp's build_layer_attn_linear):
// q, k and v through one projection (attn_qkv), z through attn_gate, beta and alpha per value
// head (ssm_beta / ssm_alpha, or Qwen3-Next's interleaved ssm_ba regrouped at load), the causal
// conv with SiLU and no bias, the gated delta rule (L2-normed q and k, decay softplus(alpha +
// dt_bias) * A, sigmoid beta), the per-head RMS norm and then the silu(z) gate (norm before the
// gate, unlike Mamba-2), then ssm_out.
#pragma once

#include <cstdint>

#include "model/layer_pass.h"
#include "model/tensor_table.h"

namespace sy::model {

struct GdnWeights {
  Linear qkv, z, beta, alpha;
  const sy_tensor *conv_w = nullptr, *dt_b = nullptr, *a = nullptr, *norm = nullptr;
  Linear out;
  uint32_t head_map = SY_GDN_HEADS_MODULO;  // sy_gdn_head_map
  uint32_t state_layer = 0;
};

struct GdnRules {
  bool scales = false;  // the projections' `.scale` multiply (qwen35) or are only taken
  bool out_scale = false;
  bool ba_fused = false;  // Qwen3-Next: ssm_ba {E, 2 H_v} per key head [beta x r | alpha x r]
  uint32_t head_map = SY_GDN_HEADS_MODULO;
};

void gdn_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const GdnRules& r, GdnWeights& w);
uint64_t gdn_scratch(const ModelDesc& d);
void gated_delta_net(LayerPass& p, const GdnWeights& w, const sy_tensor& xn, const sy_tensor& out);

}  // namespace sy::model
