// llama (src/models/llama.cpp): attention with RoPE in every layer, a dense SwiGLU FFN or
// Mixtral's softmax MoE; q/k/v/output and FFN biases, `.scale` tensors and rope_freqs applied.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Llama final : public Arch {
 public:
  std::string_view name() const override { return "llama"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    d.n_ff =
        k.uniform(Key::feed_forward_length,
                  k.per_layer(Key::feed_forward_length, std::vector<uint32_t>(d.n_layer, 0)), all);
    set_heads(k, d, read_head_counts(k, d), all);
    const uint32_t kl = k.u32(Key::key_length, d.n_embd / d.n_head);
    const uint32_t vl = k.u32(Key::value_length, d.n_embd / d.n_head);
    if (kl == 0) throw k.fail(k.name(Key::key_length) + " must be positive");
    // llama.cpp's llama graph asserts both; its loader names n_rot itself.
    if (vl != kl)
      throw k.fail(k.name(Key::value_length) + " (" + std::to_string(vl) +
                   ") differs from key_length (" + std::to_string(kl) +
                   "): the llama graph needs them equal");
    const uint32_t n_rot = k.u32(Key::rope_dimension_count, kl);
    if (n_rot != kl)
      throw k.fail(k.name(Key::rope_dimension_count) + ": invalid n_rot: " + std::to_string(n_rot) +
                   ", expected " + std::to_string(kl));
    d.head_dim = kl;
    d.attn_scale = 1.0f / std::sqrt(static_cast<float>(kl));
    d.rope = read_rope(k, d, n_rot, false);
    d.n_ff_exp = d.n_expert ? d.n_ff : 0;
    d.moe_normalize = true;  // llama.cpp's llama graph: softmax gating, norm_w = true (Mixtral)
    d.layers.assign(d.n_layer,
                    LayerSpec{Mixer::attention, d.n_expert > 0 ? FfnKind::moe : FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.u32(Key::head_count_kv, d.n_head_kv);
    k.u32(Key::rope_dimension_count, d.head_dim);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.n_expert > 0) {  // Mixtral-style MoE in every layer
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    w.rope_freqs =
        t.optional_f32(names::tensor(Tensor::rope_freqs), {d.rope.n_rot / 2}, {Init::norm, 0});
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::applied, true};
    const LinearRules ffn{Take::applied, true, true};  // build_ffn: add the bias, then scale
    MoeRules moe;
    moe.expert_scales = Take::applied;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    });
  }
};

}  // namespace

const Arch& llama_arch() {
  static const Llama a;
  return a;
}

}  // namespace sy::model
