// gpt-oss (gpt-oss-20b / 120b; src/models/openai-moe.cpp): attention with q/k/v/output biases
// and a learned sink logit per head over NEOX RoPE, sliding-window layers alternating with
// global ones (every `sliding_window_pattern`-th layer global, 2 by default); an MoE FFN in every
// layer after post_attention_norm: a biased router, softmax over the chosen experts' logits
// (the same weights as a renormalised softmax), biased experts and the clamped SwiGLU of
// OpenAI's reference (alpha 1.702, limit 7).
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

constexpr uint32_t kDefaultPeriod = 2;

class GptOss final : public Arch {
 public:
  std::string_view name() const override { return "gpt-oss"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_dense_attention(k, d, true);
    d.attn_scale = 1.0f / std::sqrt(static_cast<float>(d.rope.n_rot));
    if (d.n_expert == 0) throw k.fail(k.name(Key::expert_count) + " must be positive");
    d.n_ff_exp = k.u32(Key::expert_feed_forward_length);
    d.n_ff = d.n_ff_exp;
    d.ffn_act = FfnAct::swiglu_oai;
    d.moe_normalize = true;  // SOFTMAX_WEIGHT: a softmax over the chosen experts' logits
    if (const float s = k.f32(Key::expert_weights_scale, 0.0f); s != 0.0f) d.moe_weights_scale = s;
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, FfnKind::moe});
    d.tied_output = false;  // output.weight is required (llama.cpp creates it with no fallback)
    d.window = k.u32(Key::sliding_window);
    if (d.window) read_swa_period(k, d, kDefaultPeriod);
    d.rope_swa = d.rope;  // the same scaling; a base of its own when the file has one
    d.rope_swa.freq_base = read_freq_base_swa(k, d.rope.freq_base);
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
    write_dense_attention(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    k.u32(Key::sliding_window, d.window);
    k.u32(Key::expert_count, d.n_expert);
    k.u32(Key::expert_used_count, d.n_expert_used);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.qkv.write_bias = true;
    attn.out = {Take::applied, true};
    attn.out.write_bias = true;
    attn.sinks = true;
    MoeRules moe;
    moe.biases = true;
    moe.expert_scales = Take::unapplied;  // build_moe_ffn gets none of them here
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      L.ffn_norm = layer_norm(t, d, Tensor::post_attention_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      moe_tensors(t, d, il, moe, L.moe);
    });
  }
};

}  // namespace

const Arch& gpt_oss_arch() {
  static const GptOss a;
  return a;
}

}  // namespace sy::model
