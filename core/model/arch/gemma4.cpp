// gemma4 (Gemma 4 dense; src/models/gemma4.cpp): Gemma 3's layer (scaled embeddings, q/k norms,
// post-norms, GEGLU, soft-capped logits) with local layers of a smaller head size
// (key_length_swa) and their own RoPE base, global layers rotated with rope_freqs (Gemma 4's
// proportional RoPE: factors of 1e30 hold most pairs still), KV heads per layer, V RMS-normed
// without a weight (K's projection where a layer has no attn_v), a softmax scale of 1 and an
// optional scale of each layer's output. Not implemented, refused by name: KV shared across
// layers, per-layer input embeddings, and the MoE layers of gemma4 26B-A4B (ffn_gate_inp).
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"

namespace sy::model {
namespace {

using names::Tensor;

class Gemma4 final : public Arch {
 public:
  std::string_view name() const override { return "gemma4"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    const std::vector<bool> all(d.n_layer, true);
    const HeadCounts h = read_head_counts(k, d);
    d.n_head = k.uniform(Key::head_count, h.heads, all);
    d.kv_heads = h.kv;
    d.n_head_kv = h.kv.empty() ? 0 : h.kv[0];
    for (uint32_t kv : h.kv)
      if (kv == 0 || d.n_head == 0 || d.n_head % kv != 0)
        throw k.fail(k.name(Key::head_count_kv) + " must divide " + k.name(Key::head_count));
    if (const uint32_t n = k.u32(Key::shared_kv_layers, 0u); n != 0)
      throw k.fail(k.name(Key::shared_kv_layers) + " = " + std::to_string(n) +
                   ": KV shared across layers is not implemented");
    if (const uint32_t n = k.u32(Key::embedding_length_per_layer_input); n != 0)
      throw k.fail(k.name(Key::embedding_length_per_layer_input) + " = " + std::to_string(n) +
                   ": per-layer input embeddings are not implemented");
    d.head_dim = head_size(k, Key::key_length, Key::value_length);
    d.head_dim_swa = head_size(k, Key::key_length_swa, Key::value_length_swa);
    d.attn_scale = 1.0f;  // Gemma 4 scales neither q nor the scores
    d.v_norm = true;
    d.n_ff = read_n_ff(k, d, all);
    d.ffn_act = FfnAct::geglu;
    d.embedding_scale = std::sqrt(static_cast<float>(d.n_embd));
    d.logit_softcap = k.f32(Key::final_logit_softcapping, 0.0f);
    if (d.logit_softcap < 0.0f)
      throw k.fail(k.name(Key::final_logit_softcapping) + " must not be negative");
    d.window = k.u32(Key::sliding_window);
    if (!k.has(Key::sliding_window_pattern))
      throw k.fail("missing key " + k.name(Key::sliding_window_pattern));
    const std::vector<uint32_t> swa =
        k.per_layer(Key::sliding_window_pattern, std::vector<uint32_t>(d.n_layer, 0));
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, FfnKind::dense});
    for (uint32_t il = 0; il < d.n_layer; ++il) d.layers[il].swa = swa[il] != 0;
    // Both kinds rotate whole heads (rope.dimension_count and its _swa twin).
    d.rope = read_rope(k, d, rotation(k, Key::rope_dimension_count, d.head_dim), true);
    d.rope_swa = d.rope;
    d.rope_swa.n_rot = rotation(k, Key::rope_dimension_count_swa, d.head_dim_swa);
    d.rope_swa.freq_base = read_freq_base_swa(k, 10000.0f);
    d.rope_swa.freq_scale = 1.0f;  // rope_freq_scale_train_swa
    d.rope_swa.factors = false;    // rope_freqs are the global layers' only
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    std::vector<int32_t> kv, swa;
    for (uint32_t il = 0; il < d.n_layer; ++il) {
      kv.push_back(static_cast<int32_t>(d.n_head_kv_at(il)));
      swa.push_back(d.layers[il].swa ? 1 : 0);
    }
    k.i32_array(Key::head_count_kv, kv);
    k.u32(Key::key_length, d.head_dim);
    k.u32(Key::value_length, d.head_dim);
    k.u32(Key::key_length_swa, d.head_dim_swa);
    k.u32(Key::value_length_swa, d.head_dim_swa);
    k.u32(Key::sliding_window, d.window);
    k.bool_array(Key::sliding_window_pattern, swa);
    k.u32(Key::shared_kv_layers, 0);
    k.u32(Key::embedding_length_per_layer_input, 0);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.f32(Key::rope_freq_base_swa, d.rope_swa.freq_base);
    k.u32(Key::rope_dimension_count, d.rope.n_rot);
    k.u32(Key::rope_dimension_count_swa, d.rope_swa.n_rot);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.logit_softcap != 0.0f) k.f32(Key::final_logit_softcapping, d.logit_softcap);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    AttentionRules attn;
    attn.qkv = {Take::no, true};  // wq_s, wk_s, wv_s; no biases
    attn.out = {Take::no, true};
    attn.qk_norm = true;
    attn.v_optional = true;
    attn.fused_qkv = false;
    const LinearRules ffn{Take::no, true};  // build_ffn's up / gate / down scales
    bool freqs = false;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      L.attn_post_norm = layer_norm(t, d, Tensor::post_attention_norm, il);
      L.out_scale = t.optional_f32(names::tensor(Tensor::layer_output_scale, il), {1},
                                   {Init::norm, 0.0f}, Need::written);
      if (!d.layers[il].swa && !freqs) {  // with the first global layer's tensors, in the file
        w.rope_freqs =
            &t.f32(names::tensor(Tensor::rope_freqs), {d.head_dim / 2}, {Init::rope_quarter, 0.0f});
        freqs = true;
      }
      L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
      ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
      L.ffn_post_norm = layer_norm(t, d, Tensor::post_ffw_norm, il);
    });
  }

 private:
  // key_length / value_length (or the _swa pair): equal and positive (llama.cpp asserts it).
  static uint32_t head_size(const KeyReader& k, Key key, Key value) {
    const uint32_t kl = k.u32(key), vl = k.u32(value);
    if (kl == 0 || vl != kl)
      throw k.fail(k.name(key) + " and " + k.name(value) + " must be equal and positive");
    return kl;
  }
  // The rotated dims of a head of `head` values: all of them here.
  static uint32_t rotation(const KeyReader& k, Key key, uint32_t head) {
    const uint32_t n = k.u32(key, head);
    if (n != head)
      throw k.fail(k.name(key) + " (" + std::to_string(n) + ") must be the head size (" +
                   std::to_string(head) + ")");
    return n;
  }
};

}  // namespace

const Arch& gemma4_arch() {
  static const Gemma4 a;
  return a;
}

}  // namespace sy::model
