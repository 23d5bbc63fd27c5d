// jamba (src/models/jamba.cpp): Mamba-1 mixers with RMS-normed dt/B/C and attention without
// positional encoding (a layer is attention where head_count_kv is nonzero), each followed by a
// dense SwiGLU or a softmax MoE without renormalisation (a layer is MoE where it has a router).
#include <algorithm>
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

class Jamba final : public Arch {
 public:
  std::string_view name() const override { return "jamba"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_mamba1_sizes(k, d);
    d.dt_b_c_norms = true;  // jamba's required ssm_{dt,b,c}_norm tensors switch the norms on
    const HeadCounts h = read_head_counts(k, d);
    std::vector<bool> attn(d.n_layer), ffn(d.n_layer, true);
    for (uint32_t l = 0; l < d.n_layer; ++l) attn[l] = h.kv[l] != 0;  // 0: a Mamba layer
    d.n_ff =
        k.uniform(Key::feed_forward_length,
                  k.per_layer(Key::feed_forward_length, std::vector<uint32_t>(d.n_layer, 0)), ffn);
    d.n_head = k.uniform(Key::head_count, h.heads, attn);
    d.n_head_kv = k.uniform(Key::head_count_kv, h.kv, attn);
    if (std::find(attn.begin(), attn.end(), true) != attn.end()) {
      if (d.n_head == 0 || d.n_head % d.n_head_kv != 0)
        throw k.fail(k.name(Key::head_count) + " must be positive and a multiple of head_count_kv");
      // The graph splits attn_q {n_embd, n_embd} into value_length-wide heads and caches keys as
      // wide.
      const uint32_t v = k.u32(Key::value_length, d.n_embd / d.n_head);
      const uint32_t kl = k.u32(Key::key_length, d.n_embd / d.n_head);
      if (kl != v || v * d.n_head != d.n_embd)
        throw k.fail(k.name(Key::key_length) + " / value_length (" + std::to_string(kl) + " / " +
                     std::to_string(v) + ") must both be embedding_length / head_count (" +
                     std::to_string(d.n_embd / d.n_head) + ") for jamba");
      d.head_dim = v;
      d.attn_scale = 1.0f / std::sqrt(static_cast<float>(v));
    }
    d.n_ff_exp = d.n_expert ? d.n_ff : 0;
    d.moe_normalize = false;  // jamba.cpp: build_moe_ffn with norm_w = false
    for (uint32_t l = 0; l < d.n_layer; ++l) {
      // As llama.cpp's loader: a layer is MoE when its router tensor is there.
      const bool moe = k.file().find_tensor(names::tensor(Tensor::ffn_gate_inp, l));
      if (moe && d.n_expert == 0)
        throw k.fail(k.name(Key::expert_count) + " is 0 but layer " + std::to_string(l) +
                     " has ffn_gate_inp");
      d.layers.push_back(
          {attn[l] ? Mixer::attention : Mixer::ssm, moe ? FfnKind::moe : FfnKind::dense});
    }
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    // head_count_kv per layer, 0 = Mamba layer: what convert_hf_to_gguf's JambaModel writes (a
    // Python int list, so gguf-py stores INT32).
    std::vector<int32_t> kv(d.n_layer);
    for (uint32_t l = 0; l < d.n_layer; ++l)
      kv[l] = d.layers[l].mixer == Mixer::attention ? int32_t(d.n_head_kv) : 0;
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.i32_array(Key::head_count_kv, kv);
    write_mamba1_sizes(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.n_expert > 0) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    // jamba.cpp: create_tensor_qkv (optional q/k/v biases), no output or FFN biases; its graph
    // gives build_ffn and build_moe_ffn no scales, but build_attn the output scale.
    AttentionRules attn;
    attn.qkv = {Take::applied, true};
    attn.out = {Take::no, true};
    const LinearRules ffn{Take::no, false, true};
    MoeRules moe;
    moe.expert_scales = Take::unapplied;
    moe.writer_order = true;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      if (L.spec.mixer == Mixer::attention)
        attention_tensors(t, d, il, attn, L.attn);
      else
        mamba_tensors(t, d, il, true, true, L.ssm);
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn, {}, true);
    });
  }
};

}  // namespace

const Arch& jamba_arch() {
  static const Jamba a;
  return a;
}

}  // namespace sy::model
