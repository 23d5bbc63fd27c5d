// mistral3 (Ministral 3, Mistral Small 3.x dense and MoE; src/models/mistral3.cpp): llama's
// layer with its optional attention-output and FFN biases and rope_freqs, YaRN with the file's
// beta and log-multiplier keys, and Llama 4's attention temperature tuning of q
// (attention.temperature_scale, floored at the original context); a softmax MoE with
// renormalised weights in every layer when the file has experts. Projection scales: q/k/v/o
// applied, the FFN's and the experts' taken and not applied.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Mistral3 final : public Arch {
 public:
  std::string_view name() const override { return "mistral3"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    read_dense_attention(k, d, false);
    read_yarn_keys(k, d.rope);
    if (const float s = k.f32(Key::attention_temperature_scale, 0.0f); s != 0.0f) {
      d.attn_temp_scale = s;
      d.attn_temp_floor = k.u32(Key::rope_scaling_original_context_length, d.n_ctx);
      if (d.attn_temp_floor == 0)
        throw k.fail(k.name(Key::rope_scaling_original_context_length) +
                     " must be positive for attention temperature scaling");
    }
    d.n_ff = read_n_ff(k, d, all);
    d.n_ff_exp = d.n_expert ? d.n_ff : 0;
    d.moe_normalize = true;
    d.layers.assign(d.n_layer,
                    LayerSpec{Mixer::attention, d.n_expert > 0 ? FfnKind::moe : FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    write_dense_attention(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.attn_temp_scale != 0.0f) {
      k.f32(Key::attention_temperature_scale, d.attn_temp_scale);
      k.u32(Key::rope_scaling_original_context_length, d.attn_temp_floor);
    }
    if (d.n_expert > 0) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::applied, true};
    const LinearRules ffn{Take::applied, false, true};
    MoeRules moe;
    moe.expert_scales = Take::unapplied;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      // llama.cpp creates rope_freqs here, in layer 0's tensors (one tensor for every layer).
      if (il == 0)
        w.rope_freqs =
            t.optional_f32(names::tensor(Tensor::rope_freqs), {d.rope.n_rot / 2}, {Init::norm, 0});
      if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    });
  }
};

}  // namespace

const Arch& mistral3_arch() {
  static const Mistral3 a;
  return a;
}

}  // namespace sy::model
