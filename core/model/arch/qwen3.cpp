// qwen3 and qwen3moe (Qwen3, Qwen3-30B-A3B; src/models/qwen3.cpp, qwen3moe.cpp): llama's layer
// with per-head q/k RMS norms before NEOX RoPE and a head size of its own (key_length); q/k/v
// biases and every `.scale` applied; qwen3moe's softmax MoE with renormalised weights and
// per-expert scales in every layer.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Qwen3 final : public Arch {
 public:
  explicit Qwen3(bool moe) : moe_(moe) {}
  std::string_view name() const override { return moe_ ? "qwen3moe" : "qwen3"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    read_dense_attention(k, d, true);  // qwen3.cpp asserts n_rot == the head size
    d.n_ff = read_n_ff(k, d, all);
    if (moe_) {
      if (d.n_expert == 0) throw k.fail(k.name(Key::expert_count) + " must be positive");
      d.n_ff_exp = k.u32(Key::expert_feed_forward_length, 0u);
      if (d.n_ff_exp == 0) d.n_ff_exp = d.n_ff / d.n_expert_used;
      d.moe_normalize = true;
    }
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, moe_ ? FfnKind::moe : FfnKind::dense});
    if (const size_t n = k.array_size(Key::classifier_output_labels)) d.n_cls_out = uint32_t(n);
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    write_dense_attention(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (moe_) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    // The reranker head {n_embd, classifier labels or 1}: taken, not applied (no pooling here).
    if (!moe_) t.unapplied(names::tensor(Tensor::cls_out), {d.n_embd, d.n_cls_out});
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::no, true};
    attn.qk_norm = true;
    const LinearRules ffn{Take::no, true, true};
    MoeRules moe;
    moe.expert_scales = Take::applied;
    moe.writer_order = true;  // the converter's order: gate, down, up
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      if (moe_)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn, {}, true);
    });
  }

 private:
  bool moe_;
};

}  // namespace

const Arch& qwen3_arch() {
  static const Qwen3 a(false);
  return a;
}
const Arch& qwen3moe_arch() {
  static const Qwen3 a(true);
  return a;
}

}  // namespace sy::model
