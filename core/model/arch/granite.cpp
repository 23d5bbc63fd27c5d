// granite and granitemoe (Granite 3.x dense and MoE; src/models/granite.cpp, granite-moe.cpp):
// llama's layer with Granite's embedding, residual, attention and logit multipliers, NORM RoPE
// with rope_freqs unless rope.scaling.finetuned is false, optional attention-output and FFN
// biases, and a softmax MoE with renormalised weights plus an optional unweighted shared expert.
// Projection scales: q/k/v/o applied, the FFN's, the experts' and the shared expert's taken and
// not applied.
#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Granite final : public Arch {
 public:
  explicit Granite(bool moe) : moe_(moe) {}
  std::string_view name() const override { return moe_ ? "granitemoe" : "granite"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    d.logit_scale = k.f32(Key::logit_scale);  // required by llama.cpp's loader
    d.residual_scale = k.f32(Key::residual_scale, 0.0f);
    d.embedding_scale = k.f32(Key::embedding_scale, 0.0f);
    set_heads(k, d, read_head_counts(k, d), all);
    read_head_dim(k, d, true);
    const uint32_t n_rot = read_full_rotation(k, d);
    // Granite uses rope.scaling.finetuned as its RoPE switch, true when absent.
    if (k.boolean(Key::rope_scaling_finetuned, true)) d.rope = read_rope(k, d, n_rot, false);
    d.n_ff = read_n_ff(k, d, all);
    d.n_ff_exp = d.n_expert ? d.n_ff : 0;  // the experts' width is feed_forward_length
    d.n_ff_shexp = d.n_expert ? k.u32(Key::expert_shared_feed_forward_length, 0u) : 0;
    d.moe_normalize = true;
    d.layers.assign(d.n_layer,
                    LayerSpec{Mixer::attention, d.n_expert > 0 ? FfnKind::moe : FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.u32(Key::head_count_kv, d.n_head_kv);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.f32(Key::logit_scale, d.logit_scale);
    if (d.embedding_scale != 0.0f) k.f32(Key::embedding_scale, d.embedding_scale);
    if (d.residual_scale != 0.0f) k.f32(Key::residual_scale, d.residual_scale);
    if (d.attn_scale != 0.0f) k.f32(Key::attention_scale, d.attn_scale);
    if (d.n_expert > 0) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      if (d.n_ff_shexp) k.u32(Key::expert_shared_feed_forward_length, d.n_ff_shexp);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::applied, true};
    const LinearRules ffn{Take::applied, false, true};  // biases added; scales taken, not applied
    MoeRules moe;
    moe.expert_scales = Take::unapplied;
    moe.shared = true;
    moe.shared_rules = {Take::no, false, true};
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      // llama.cpp creates rope_freqs with layer 0's tensors (one tensor for every layer).
      if (il == 0 && d.rope.enabled)
        w.rope_freqs =
            t.optional_f32(names::tensor(Tensor::rope_freqs), {d.rope.n_rot / 2}, {Init::norm, 0});
      else if (il == 0)
        t.unapplied(names::tensor(Tensor::rope_freqs), {d.head_dim / 2});
      if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    });
  }

 private:
  bool moe_;
};

}  // namespace

const Arch& granite_arch() {
  static const Granite a(false);
  return a;
}
const Arch& granitemoe_arch() {
  static const Granite a(true);
  return a;
}

}  // namespace sy::model
