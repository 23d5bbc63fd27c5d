// qwen2 and qwen2moe (Qwen2 / Qwen2.5, Qwen1.5-MoE and Qwen2-57B-A14B; src/models/qwen2.cpp,
// qwen2moe.cpp): llama's layer with NEOX RoPE and q/k/v biases; qwen2's optional output bias;
// qwen2moe's softmax MoE without renormalisation in every layer beside a shared expert gated by
// sigmoid(ffn_gate_inp_shexp . x). Projection scales: q/k/v/o applied (build_qkv, build_attn),
// the FFN's and the experts' taken and not applied (its build_ffn and build_moe_ffn get none).
#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Qwen2 final : public Arch {
 public:
  explicit Qwen2(bool moe) : moe_(moe) {}
  std::string_view name() const override { return moe_ ? "qwen2moe" : "qwen2"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    set_heads(k, d, read_head_counts(k, d), all);
    read_head_dim(k, d, false);
    // create_tensor_qkv(n_embd, n_embd, ...): q is as wide as the stream.
    if (d.q_width() != d.n_embd)
      throw k.fail(k.name(Key::key_length) + " (" + std::to_string(d.head_dim) + ") times " +
                   k.name(Key::head_count) + " must be " + k.name(Key::embedding_length));
    const uint32_t n_rot = read_full_rotation(k, d);
    d.rope = read_rope(k, d, n_rot, true);
    d.n_ff = read_n_ff(k, d, all);
    if (moe_) {
      if (d.n_expert == 0) throw k.fail(k.name(Key::expert_count) + " must be positive");
      if (d.tied_output) throw k.fail("missing tensor " + names::tensor(Tensor::output));
      d.n_ff_exp = k.u32(Key::expert_feed_forward_length, 0u);
      if (d.n_ff_exp == 0) d.n_ff_exp = d.n_ff / d.n_expert_used;
      d.n_ff_shexp = k.u32(Key::expert_shared_feed_forward_length, 0u);
      if (d.n_ff_shexp == 0) d.n_ff_shexp = d.n_ff;
      d.moe_normalize = false;  // build_moe_ffn(..., norm_w = false, ...)
    }
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, moe_ ? FfnKind::moe : FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.u32(Key::head_count_kv, d.n_head_kv);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (moe_) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
      k.u32(Key::expert_shared_feed_forward_length, d.n_ff_shexp);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    if (!moe_)
      w.output_bias =
          t.optional_f32(names::tensor(Tensor::output, "bias"), {d.n_vocab}, {Init::normal, 0.1f});
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.qkv.write_bias = true;  // real Qwen2 files have q/k/v biases
    attn.out = {Take::no, true};
    const LinearRules ffn{Take::no, false, true};
    MoeRules moe;
    moe.expert_scales = Take::unapplied;
    moe.writer_order = true;  // the converter's order: router, gate, down, up
    moe.shared = true;
    moe.shared_gate = true;
    moe.shared_rules = ffn;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      if (moe_)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    });
  }

 private:
  bool moe_;
};

}  // namespace

const Arch& qwen2_arch() {
  static const Qwen2 a(false);
  return a;
}
const Arch& qwen2moe_arch() {
  static const Qwen2 a(true);
  return a;
}

}  // namespace sy::model
