// falcon-h1 (src/models/falcon-h1.cpp): every layer runs attention (NEOX RoPE) and a Mamba-2
// mixer side by side on the same normed input and adds both to the residual, then a SwiGLU FFN
// with biases. The muP multipliers are folded into the weights by the converter.
#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

class FalconH1 final : public Arch {
 public:
  std::string_view name() const override { return "falcon-h1"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_mamba2_sizes(k, d, false);
    const std::vector<bool> all(d.n_layer, true);
    set_heads(k, d, read_head_counts(k, d), all);
    read_head_dim(k, d, false);
    const uint32_t n_rot = k.u32(Key::rope_dimension_count, d.head_dim);
    if (n_rot == 0 || n_rot % 2 || n_rot > d.head_dim)
      throw k.fail(k.name(Key::rope_dimension_count) + " must be even and at most the head size");
    d.rope = read_rope(k, d, n_rot, true);
    d.n_ff = read_n_ff(k, d, all);
    d.layers.assign(d.n_layer, LayerSpec{Mixer::parallel, FfnKind::dense});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    write_dense_attention(k, d);
    write_ssm_sizes(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::unapplied, true};  // build_attn gets no output bias
    const LinearRules ffn{Take::applied, false, true};
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      mamba2_tensors(t, d, il, {true, Need::written}, L.ssm2);
      attention_tensors(t, d, il, attn, L.attn);
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      // The converter maps pre_ff_layernorm.weight whole onto the name: no ".weight".
      L.ffn_norm = &t.norm(names::tensor(Tensor::ffn_norm, il, ""), d.n_embd);
      if (il == 0) t.unapplied(names::tensor(Tensor::rope_freqs), {d.rope.n_rot / 2});
      ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    });
  }
};

}  // namespace

const Arch& falcon_h1_arch() {
  static const FalconH1 a;
  return a;
}

}  // namespace sy::model
