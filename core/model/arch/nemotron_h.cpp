// nemotron_h and nemotron_h_moe (Nemotron-H, Nemotron 3 Nano/Super; src/models/nemotron-h.cpp):
// every block is one of a Mamba-2 mixer (head_count_kv and feed_forward_length 0), attention
// without positional encoding (feed_forward_length 0), or an FFN: squared-ReLU without a gate, or
// an MoE with sigmoid routing and a selection bias, squared-ReLU experts, an optional latent
// projection and a shared expert. Each block has its own pre-norm (attn_norm) and residual.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

class NemotronH final : public Arch {
 public:
  explicit NemotronH(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_mamba2_sizes(k, d, false);
    const HeadCounts h = read_head_counts(k, d);
    const std::vector<uint32_t> ff =
        k.per_layer(Key::feed_forward_length, std::vector<uint32_t>(d.n_layer, 0));
    std::vector<bool> attn(d.n_layer), ffn(d.n_layer);
    for (uint32_t l = 0; l < d.n_layer; ++l) {
      const bool mamba = h.kv[l] == 0 && ff[l] == 0;
      attn[l] = !mamba && ff[l] == 0;
      ffn[l] = ff[l] != 0;
    }
    set_heads(k, d, h, attn);
    read_head_dim(k, d, true);
    d.n_ff = k.uniform(Key::feed_forward_length, ff, ffn);
    d.ffn_act = FfnAct::relu_sqr;
    d.n_ff_exp = k.u32(Key::expert_feed_forward_length, 0u);
    if (d.n_expert > 0 && d.n_ff_exp == 0) d.n_ff_exp = d.n_ff / d.n_expert_used;
    d.n_ff_shexp = k.u32(Key::expert_shared_feed_forward_length, 0u);
    d.moe_normalize = k.boolean(Key::expert_weights_norm, false);
    if (const float s = k.f32(Key::expert_weights_scale, 0.0f); s != 0.0f) d.moe_weights_scale = s;
    d.moe_latent = k.u32(Key::moe_latent_size, 0u);
    d.moe_gating = MoeGating::sigmoid;
    if (d.n_expert > 0 && d.n_ff_shexp == 0)
      throw k.fail(k.name(Key::expert_shared_feed_forward_length) +
                   " must be positive: every Nemotron-H MoE layer has a shared expert");
    for (uint32_t l = 0; l < d.n_layer; ++l) {
      if (ffn[l])
        d.layers.push_back({Mixer::none, d.n_expert > 0 ? FfnKind::moe : FfnKind::dense});
      else
        d.layers.push_back({attn[l] ? Mixer::attention : Mixer::ssm2, FfnKind::none});
    }
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    // The converter derives the per-layer arrays from hybrid_override_pattern (M, *, -/E).
    std::vector<int32_t> kv(d.n_layer), ff(d.n_layer);
    for (uint32_t l = 0; l < d.n_layer; ++l) {
      kv[l] = d.layers[l].mixer == Mixer::attention ? int32_t(d.n_head_kv) : 0;
      ff[l] = d.layers[l].ffn != FfnKind::none ? int32_t(d.n_ff) : 0;
    }
    k.i32_array(Key::feed_forward_length, ff);
    k.u32(Key::head_count, d.n_head);
    k.i32_array(Key::head_count_kv, kv);
    k.u32(Key::key_length, d.head_dim);
    k.u32(Key::value_length, d.head_dim);
    write_ssm_sizes(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.n_expert > 0) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
      k.u32(Key::expert_shared_feed_forward_length, d.n_ff_shexp);
      k.u32(Key::expert_shared_count, 1);
      k.boolean(Key::expert_weights_norm, d.moe_normalize);
      k.f32(Key::expert_weights_scale, d.moe_weights_scale);
      if (d.moe_latent) k.u32(Key::moe_latent_size, d.moe_latent);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::applied, true};
    const LinearRules ffn{Take::applied, true, true};
    MoeRules moe;
    moe.gated = false;
    moe.expert_scales = Take::applied;
    moe.selection_bias = true;
    moe.latent = true;
    moe.shared = true;
    moe.shared_rules = {Take::no, true, true};
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      L.ffn_norm = L.attn_norm;  // an FFN block is normed by its attn_norm
      if (L.spec.mixer == Mixer::ssm2)
        mamba2_tensors(t, d, il, {true, Need::required}, L.ssm2);
      else if (L.spec.mixer == Mixer::attention)
        attention_tensors(t, d, il, attn, L.attn);
      else if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, false, L.ffn);
    });
  }

 private:
  std::string_view name_;
};

}  // namespace

const Arch& nemotron_h_arch() {
  static const NemotronH a("nemotron_h");
  return a;
}
const Arch& nemotron_h_moe_arch() {
  static const NemotronH a("nemotron_h_moe");
  return a;
}

}  // namespace sy::model
