// granitehybrid (Granite 4.0-H, src/models/granite-hybrid.cpp): Mamba-2 mixers where
// head_count_kv is 0, attention (NORM RoPE with rope_freqs unless rope.scaling.finetuned is false,
// attention.scale) elsewhere; each layer then a dense SwiGLU with biases or a softmax MoE with an
// optional unweighted shared expert; Granite's embedding, residual and logit multipliers.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

class GraniteHybrid final : public Arch {
 public:
  std::string_view name() const override { return "granitehybrid"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_mamba2_sizes(k, d, true);
    d.logit_scale = k.f32(Key::logit_scale, 0.0f);
    d.residual_scale = k.f32(Key::residual_scale, 0.0f);
    d.embedding_scale = k.f32(Key::embedding_scale, 0.0f);
    const HeadCounts h = read_head_counts(k, d);
    std::vector<bool> attn(d.n_layer), all(d.n_layer, true);
    for (uint32_t l = 0; l < d.n_layer; ++l) attn[l] = h.kv[l] != 0;  // 0: a Mamba-2 layer
    set_heads(k, d, h, attn);
    read_head_dim(k, d, true);
    // Granite uses rope.scaling.finetuned as its RoPE switch, true when absent.
    if (k.boolean(Key::rope_scaling_finetuned, true)) {
      const uint32_t n_rot = k.u32(Key::rope_dimension_count, d.head_dim);
      if (n_rot == 0 || n_rot % 2 || n_rot > d.head_dim)
        throw k.fail(k.name(Key::rope_dimension_count) + " must be even and at most the head size");
      d.rope = read_rope(k, d, n_rot, false);
    }
    d.n_ff = read_n_ff(k, d, all);
    d.n_ff_exp = d.n_expert ? d.n_ff : 0;  // the experts' width is feed_forward_length
    d.n_ff_shexp = k.u32(Key::expert_shared_feed_forward_length, 0u);
    d.moe_normalize = true;
    for (uint32_t l = 0; l < d.n_layer; ++l)
      d.layers.push_back({attn[l] ? Mixer::attention : Mixer::ssm2,
                          d.n_expert > 0 ? FfnKind::moe : FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    std::vector<int32_t> kv(d.n_layer);
    for (uint32_t l = 0; l < d.n_layer; ++l)
      kv[l] = d.layers[l].mixer == Mixer::attention ? int32_t(d.n_head_kv) : 0;
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.i32_array(Key::head_count_kv, kv);
    k.u32(Key::key_length, d.head_dim);
    k.u32(Key::value_length, d.head_dim);
    write_ssm_sizes(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    // Real Granite 4.0-H files: no positional encoding.
    k.boolean(Key::rope_scaling_finetuned, d.rope.enabled);
    if (d.rope.enabled) k.f32(Key::rope_freq_base, d.rope.freq_base);
    if (d.embedding_scale != 0.0f) k.f32(Key::embedding_scale, d.embedding_scale);
    if (d.residual_scale != 0.0f) k.f32(Key::residual_scale, d.residual_scale);
    if (d.logit_scale != 0.0f) k.f32(Key::logit_scale, d.logit_scale);
    if (d.attn_scale != 0.0f) k.f32(Key::attention_scale, d.attn_scale);
    if (d.n_expert > 0) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      if (d.n_ff_shexp) k.u32(Key::expert_shared_feed_forward_length, d.n_ff_shexp);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    if (d.rope.enabled)
      w.rope_freqs =
          t.optional_f32(names::tensor(Tensor::rope_freqs), {d.rope.n_rot / 2}, {Init::norm, 0});
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
      if (L.spec.mixer == Mixer::attention)
        attention_tensors(t, d, il, attn, L.attn);
      else
        mamba2_tensors(t, d, il, {true, Need::required}, L.ssm2);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      if (L.spec.ffn == FfnKind::moe) {
        moe.gated = true;
        moe_tensors(t, d, il, moe, L.moe);
      } else {
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
      }
    });
  }
};

}  // namespace

const Arch& granitehybrid_arch() {
  static const GraniteHybrid a;
  return a;
}

}  // namespace sy::model
