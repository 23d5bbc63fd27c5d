// lfm2 and lfm2moe (LFM2 / LFM2.5, LFM2-8B-A1B; src/models/lfm2.cpp, lfm2moe.cpp): gated short
// convolutions where head_count_kv is 0, attention elsewhere (q/k RMS norms, NEOX RoPE, a
// sliding window on every attention layer when lfm2's attention.sliding_window is set), each
// followed by a SwiGLU FFN; lfm2moe's layers from leading_dense_block_count on are MoE with
// softmax or sigmoid routing and a selection bias. The final norm is named token_embd_norm.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Lfm2 final : public Arch {
 public:
  explicit Lfm2(bool moe) : moe_(moe) {}
  std::string_view name() const override { return moe_ ? "lfm2moe" : "lfm2"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    d.d_conv = k.u32(Key::shortconv_l_cache);
    if (d.d_conv < 2) throw k.fail(k.name(Key::shortconv_l_cache) + " must be at least 2");
    d.d_inner = d.n_embd;  // the conv's state: l_cache - 1 inputs of n_embd channels
    const HeadCounts h = read_head_counts(k, d);
    std::vector<bool> attn(d.n_layer), all(d.n_layer, true);
    for (uint32_t l = 0; l < d.n_layer; ++l) attn[l] = h.kv[l] != 0;
    set_heads(k, d, h, attn);
    read_head_dim(k, d, false);
    if (d.n_head && d.q_width() != d.n_embd)
      throw k.fail(k.name(Key::head_count) + " * head size must be embedding_length for " +
                   std::string(name()));
    d.rope = read_rope(k, d, k.u32(Key::rope_dimension_count, d.head_dim), true);
    d.n_ff = read_n_ff(k, d, all);
    uint32_t dense_lead = d.n_layer;
    if (moe_) {
      dense_lead = k.u32(Key::leading_dense_block_count, 0u);
      d.n_ff_exp = k.u32(Key::expert_feed_forward_length);
      const uint32_t gating = k.u32(Key::expert_gating_func);
      if (gating != 1 && gating != 2)
        throw k.fail(k.name(Key::expert_gating_func) + " = " + std::to_string(gating) +
                     ": only 1 (softmax) and 2 (sigmoid) are implemented");
      d.moe_gating = gating == 2 ? MoeGating::sigmoid : MoeGating::softmax;
      d.moe_normalize = true;
      if (const float s = k.f32(Key::expert_weights_scale, 0.0f); s != 0.0f)
        d.moe_weights_scale = s;
      if (dense_lead < d.n_layer && d.n_expert == 0)
        throw k.fail(k.name(Key::expert_count) + " must be positive for MoE layers");
    } else {
      // lfm2 only: a window on every attention layer.
      d.window = k.u32(Key::sliding_window, 0u);
    }
    for (uint32_t l = 0; l < d.n_layer; ++l)
      d.layers.push_back({attn[l] ? Mixer::attention : Mixer::shortconv,
                          l >= dense_lead ? FfnKind::moe : FfnKind::dense, attn[l] && d.window});
    d.rope_swa = d.rope;
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    std::vector<int32_t> kv(d.n_layer);
    for (uint32_t l = 0; l < d.n_layer; ++l)
      kv[l] = d.layers[l].mixer == Mixer::attention ? int32_t(d.n_head_kv) : 0;
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.i32_array(Key::head_count_kv, kv);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.u32(Key::shortconv_l_cache, d.d_conv);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.window) k.u32(Key::sliding_window, d.window);
    if (moe_) {
      uint32_t lead = 0;
      while (lead < d.n_layer && d.layers[lead].ffn != FfnKind::moe) ++lead;
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      k.u32(Key::leading_dense_block_count, lead);
      k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
      k.u32(Key::expert_gating_func, d.moe_gating == MoeGating::sigmoid ? 2 : 1);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w, Tensor::token_embd_norm);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::no, true};
    attn.qk_norm = true;
    const LinearRules ffn{Take::no, false, true};  // no biases (asserted); scales not applied
    MoeRules moe;
    moe.selection_bias = true;
    moe.expert_scales = Take::unapplied;
    moe.writer_order = true;  // lfm2moe's loader order: gate, down, up
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn, {}, true);
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      if (L.spec.mixer == Mixer::attention)
        attention_tensors(t, d, il, attn, L.attn);
      else
        shortconv_tensors(t, d, il, L.conv);
    });
  }

 private:
  bool moe_;
};

}  // namespace

const Arch& lfm2_arch() {
  static const Lfm2 a(false);
  return a;
}
const Arch& lfm2moe_arch() {
  static const Lfm2 a(true);
  return a;
}

}  // namespace sy::model
