// gemma4 (Gemma 4 dense; src/models/gemma4.cpp): Gemma 3's layer (scaled embeddings, q/k norms,
// post-norms, GEGLU, soft-capped logits) with local layers of a smaller head size
// (key_length_swa) and their own RoPE base, global layers rotated with rope_freqs (Gemma 4's
// proportional RoPE: factors of 1e30 hold most pairs still), KV heads per layer, V RMS-normed
// without a weight (K's projection where a layer has no attn_v), a softmax scale of 1 and an
// optional scale of each layer's output. The MoE layers of Gemma 4 26B-A4B add, beside the
// dense FFN, softmax-routed GEGLU experts on their own pre-norm, routed on the stream's plain RMS
// norm times a scale (ffn_gate_inp.scale); the two outputs, each normed, are summed. E2B and
// E4B add per-layer input embeddings (a table of n_layer slices of P values per token plus a
// projection of the embeddings, normed, each layer gating its slice into the stream) and
// layers past shared_kv_layers that compute only q and read the last earlier layer of their
// kind's cache.
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/blocks/ops.h"

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
    d.n_embd_per_layer = k.u32(Key::embedding_length_per_layer_input);
    d.head_dim = head_size(k, Key::key_length, Key::value_length);
    d.head_dim_swa = head_size(k, Key::key_length_swa, Key::value_length_swa);
    d.attn_scale = 1.0f;  // Gemma 4 scales neither q nor the scores
    d.v_norm = true;
    d.n_ff = read_n_ff(k, d, all);
    if (d.n_expert) {  // every layer MoE (llama.cpp: where ffn_gate_inp exists)
      d.n_ff_exp = k.u32(Key::expert_feed_forward_length);
      if (d.n_ff_exp == 0)
        throw k.fail(k.name(Key::expert_feed_forward_length) + " must be positive");
      d.moe_normalize = true;  // build_moe_ffn's norm_w
    }
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
    d.layers.assign(d.n_layer,
                    LayerSpec{Mixer::attention, d.n_expert ? FfnKind::moe : FfnKind::dense});
    for (uint32_t il = 0; il < d.n_layer; ++il) d.layers[il].swa = swa[il] != 0;
    read_shared_kv(k, d);
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
    if (d.n_expert) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
    }
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
    k.u32(Key::shared_kv_layers, d.kv_shared_from ? d.n_layer - d.kv_shared_from : 0);
    k.u32(Key::embedding_length_per_layer_input, d.n_embd_per_layer);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.f32(Key::rope_freq_base_swa, d.rope_swa.freq_base);
    k.u32(Key::rope_dimension_count, d.rope.n_rot);
    k.u32(Key::rope_dimension_count_swa, d.rope_swa.n_rot);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.logit_softcap != 0.0f) k.f32(Key::final_logit_softcapping, d.logit_softcap);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    const int64_t E = d.n_embd, P = d.n_embd_per_layer, L = d.n_layer;
    if (P) {
      w.per_layer_tok_embd = &t.matrix(names::tensor(Tensor::per_layer_token_embd),
                                       {P * L, d.n_vocab}, {Init::embedding, 0});
      // llama-quantize keeps it F32.
      w.per_layer_model_proj =
          t.f32(names::tensor(Tensor::per_layer_model_proj), {E, P * L}, Init{});
      w.per_layer_proj_norm = &t.norm(names::tensor(Tensor::per_layer_proj_norm), P);
    }
    AttentionRules attn;
    attn.qkv = {Take::no, true};  // wq_s, wk_s, wv_s; no biases
    attn.out = {Take::no, true};
    attn.qk_norm = true;
    attn.v_optional = true;
    attn.fused_qkv = false;
    const LinearRules ffn{Take::no, true};  // build_ffn's up / gate / down scales
    MoeRules moe;
    moe.expert_scales = Take::applied;  // the loader's generic per-expert `.scale`
    moe.fused_gate_up = true;
    bool freqs = false;
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      attention_tensors(t, d, il, attn, L.attn);
      if (L.attn.shared_kv) L.attn.cache_layer = w.layers[d.kv_source(il)].attn.cache_layer;
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
      if (d.n_expert) {
        moe_tensors(t, d, il, moe, L.moe);
        L.moe.router_in_scale = &t.f32(names::tensor(Tensor::ffn_gate_inp, il, "scale"), {d.n_embd},
                                       {Init::norm, 0.0f});
        L.moe_norm = layer_norm(t, d, Tensor::pre_ffw_norm_2, il);
        L.ffn_post_norm_dense = layer_norm(t, d, Tensor::post_ffw_norm_1, il);
        L.moe_post_norm = layer_norm(t, d, Tensor::post_ffw_norm_2, il);
      }
      if (P) {
        const LinearRules plain{Take::no, false};
        L.ple_gate = t.linear(names::tensor(Tensor::per_layer_inp_gate, il, ""), E, P, plain);
        L.ple_proj = t.linear(names::tensor(Tensor::per_layer_proj, il, ""), P, E, plain,
                              {Init::residual, 0.0f});
        L.ple_post_norm = layer_norm(t, d, Tensor::per_layer_post_norm, il);
      }
    });
  }

  // The per-layer inputs of every layer, into p.per_layer ({P, T} per layer): the layer's slice
  // of per_layer_token_embd times sqrt(P), plus the normed slice of the embeddings' projection
  // over sqrt(n_embd), the sum over sqrt(2) (project_per_layer_inputs).
  void begin(LayerPass& p) const override {
    const ModelDesc& d = p.d;
    if (!d.n_embd_per_layer) return;
    Backend& b = p.b;
    const int64_t P = d.n_embd_per_layer, L = d.n_layer, T = p.n_tokens(), E = d.n_embd;
    const sy_tensor rows = p.scratch.f32({P * L, T});
    b.get_rows(p.w.per_layer_tok_embd, p.bt.ids.data(), T, &rows);
    // Token t's slice for layer il is row il + L t of rows seen as {P, L T}.
    const sy_tensor slices = view(rows, {P, L * T});
    std::vector<int32_t> pick(static_cast<size_t>(L * T));
    const sy_tensor proj = p.scratch.f32({P, T});
    for (int64_t il = 0; il < L; ++il) {
      for (int64_t t = 0; t < T; ++t) pick[il * T + t] = static_cast<int32_t>(il + L * t);
      const sy_tensor in = layer_input(p, static_cast<uint32_t>(il));
      b.get_rows(&slices, pick.data() + il * T, static_cast<uint32_t>(T), &in);
      scale(b, in, std::sqrt(static_cast<float>(P)), in);
      const sy_tensor w = rows_of(p.w.per_layer_model_proj, il * P, P);
      b.matmul(&p.x, &w, &proj);
      scale(b, proj, 1.0f / std::sqrt(static_cast<float>(E)), proj);
      b.rms_norm(&proj, p.w.per_layer_proj_norm, d.rms_eps, &proj);
      b.add(&in, &proj, &in);
      scale(b, in, 1.0f / std::sqrt(2.0f), in);
    }
    b.synchronize();  // `pick` is read by the ops above
  }

  // Attention, then the FFN (on MoE layers with the experts beside it, each normed, summed),
  // then the per-layer input where the model has one, then the output scale
  // (src/models/gemma4.cpp).
  void layer(LayerPass& p, const LayerWeights& w, uint32_t il) const override {
    Backend& b = p.b;
    const float eps = p.d.rms_eps;
    const int64_t E = p.d.n_embd, T = p.n_tokens();
    b.rms_norm(&p.x, w.attn_norm, eps, &p.xn);
    run_mixer(p, w, p.xn, p.mix);
    b.rms_norm(&p.mix, w.attn_post_norm, eps, &p.mix);
    b.add(&p.x, &p.mix, &p.x);
    p.scratch.reset();
    b.rms_norm(&p.x, w.ffn_norm, eps, &p.xn);
    ffn(p, w.ffn, FfnAct::geglu, p.xn, p.mix);
    if (w.spec.ffn == FfnKind::moe) {
      b.rms_norm(&p.mix, w.ffn_post_norm_dense, eps, &p.mix);
      // The router's input: the plain RMS norm over sqrt(n_embd), times ffn_gate_inp.scale
      // (llama.cpp scales before the weight: the same product, in another order).
      const sy_tensor route = p.scratch.f32({E, T});
      b.rms_norm(&p.x, w.moe.router_in_scale, eps, &route);
      scale(b, route, 1.0f / std::sqrt(static_cast<float>(E)), route);
      const sy_tensor xe = p.scratch.f32({E, T}), ye = p.scratch.f32({E, T});
      b.rms_norm(&p.x, w.moe_norm, eps, &xe);
      p.moe->forward(p, il, w.moe, xe, ye, &route);
      b.rms_norm(&ye, w.moe_post_norm, eps, &ye);
      b.add(&p.mix, &ye, &p.mix);
    }
    b.rms_norm(&p.mix, w.ffn_post_norm, eps, &p.mix);
    b.add(&p.x, &p.mix, &p.x);
    p.scratch.reset();
    if (w.ple_gate.present()) {  // x += norm(proj(gelu(gate(x)) * this layer's input))
      const int64_t P = p.d.n_embd_per_layer;
      const sy_tensor g = p.scratch.f32({P, T}), in = layer_input(p, il);
      apply_linear(b, w.ple_gate, p.x, g);
      unary(b, SY_UNARY_GELU, g, g);
      b.mul(&g, &in, &g);
      apply_linear(b, w.ple_proj, g, p.mix);
      b.rms_norm(&p.mix, w.ple_post_norm, eps, &p.mix);
      b.add(&p.x, &p.mix, &p.x);
      p.scratch.reset();
    }
    scale_output(p, w);
  }

  uint64_t scratch_per_token(const ModelDesc& d) const override {
    const uint64_t moe = d.n_expert ? ffn_scratch(d.n_ff) + 3 * uint64_t(d.n_embd) : 0;
    const uint64_t ple = uint64_t(d.n_embd_per_layer) * (d.n_layer + 1);
    return std::max({Arch::scratch_per_token(d), moe, ple});
  }

 private:
  // Layer il's per-layer input {P, T} in p.per_layer.
  static sy_tensor layer_input(const LayerPass& p, uint32_t il) {
    const int64_t P = p.d.n_embd_per_layer, T = p.n_tokens();
    sy_tensor in = view(p.per_layer, {P, T * p.d.n_layer});
    in.ne[1] = T;
    in.offset += static_cast<uint64_t>(il) * P * T * sizeof(float);
    return in;
  }
  // shared_kv_layers: the last n layers read the cache of layer n_layer - n - 1 (global ones) or
  // - 2 (local ones), which must be of their kind (llama.cpp's layer_reuse assumes it).
  static void read_shared_kv(const KeyReader& k, ModelDesc& d) {
    const uint32_t n = k.u32(Key::shared_kv_layers, 0u);
    if (d.share_kv(n)) return;
    const uint32_t from = n < d.n_layer ? d.n_layer - n : 0;
    throw k.fail(k.name(Key::shared_kv_layers) + " = " + std::to_string(n) + ": layer " +
                 std::to_string(from > 0 ? from - 1 : 0) +
                 " must be global and the one before it local, as llama.cpp's layers past " +
                 "them read their caches");
  }
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
