// phi3 (Phi-3, Phi-3.5, Phi-4-mini; src/models/phi3.cpp): a fused attn_qkv (or q, k, v) with
// optional biases, NEOX RoPE over rope.dimension_count dims (partial in Phi-4-mini) with
// LongRoPE's per-dimension factors, and a fused ffn_up {n_embd, 2 n_ff} whose first half is the
// SwiGLU gate. llama.cpp keeps its sliding window off for Phi (the key is read and ignored).
// Projection scales: q/k/v/o applied, the FFN's taken and not applied.
#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Phi3 final : public Arch {
 public:
  std::string_view name() const override { return "phi3"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    set_heads(k, d, read_head_counts(k, d), all);
    read_head_dim(k, d, false);
    if (d.q_width() != d.n_embd)
      throw k.fail(k.name(Key::key_length) + " (" + std::to_string(d.head_dim) + ") times " +
                   k.name(Key::head_count) + " must be " + k.name(Key::embedding_length));
    const uint32_t n_rot = k.u32(Key::rope_dimension_count, d.head_dim);
    if (n_rot == 0 || n_rot % 2 || n_rot > d.head_dim)
      throw k.fail(k.name(Key::rope_dimension_count) + " must be even and at most the head size");
    d.rope = read_rope(k, d, n_rot, true);
    d.n_ff = read_n_ff(k, d, all);
    if (d.n_expert > 0)
      throw k.fail(k.name(Key::expert_count) + " = " + std::to_string(d.n_expert) +
                   ": phi3 has no experts (Phi-3.5-MoE is phimoe)");
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.u32(Key::head_count_kv, d.n_head_kv);
    k.u32(Key::rope_dimension_count, d.rope.n_rot);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.u32(Key::rope_scaling_original_context_length, d.rope.n_ctx_orig);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    k.u32(Key::sliding_window, 0);  // the converter's mark of a model without one
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::no, true};
    LinearRules fused{Take::no, false, true};
    fused.packed = false;  // split into the gate and up rows below
    const LinearRules down{Take::no, false, true};
    const int64_t E = d.n_embd, F = d.n_ff;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      L.ffn.down =
          t.linear(names::tensor(Tensor::ffn_down, il, ""), F, E, down, {Init::residual, 0.0f});
      const Linear up = t.linear(names::tensor(Tensor::ffn_up, il, ""), E, 2 * F, fused);
      L.ffn.gate = L.ffn.up = up;
      L.ffn.gate.w = t.packed(rows_of(up.w, 0, F));  // swiglu: silu(first half) * second half
      L.ffn.up.w = t.packed(rows_of(up.w, F, F));
      if (il == 0) rope_factors(t, d, w);
    });
  }

 private:
  // LongRoPE's factors {n_rot / 2}: get_rope_factors uses the long ones when the context exceeds
  // the original one. The context here is the file's (llama.cpp's with n_ctx 0); both are taken.
  static void rope_factors(TensorTable& t, const ModelDesc& d, ModelWeights& w) {
    const int64_t n = d.rope.n_rot / 2;
    const bool use_long = d.n_ctx > d.rope.n_ctx_orig;
    const std::string lng = names::tensor(Tensor::rope_factors_long);
    const std::string sht = names::tensor(Tensor::rope_factors_short);
    const sy_tensor* l = t.optional_f32(lng, {n}, {Init::norm, 0});
    const sy_tensor* s = t.optional_f32(sht, {n}, {Init::norm, 0});
    w.rope_freqs = use_long ? l : s;
  }
};

}  // namespace

const Arch& phi3_arch() {
  static const Phi3 a;
  return a;
}

}  // namespace sy::model
