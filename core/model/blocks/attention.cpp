#include "model/blocks/attention.h"

#include <algorithm>

#include "model/blocks/ops.h"
#include "model/model_weights.h"
#include "model/names.h"

namespace sy::model {

using names::Tensor;

void attention_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const AttentionRules& r,
                       AttentionWeights& w) {
  const int64_t E = d.n_embd, D = d.head_dim_at(il), H = d.n_head, Q = d.q_width_at(il),
                KV = d.kv_width_at(il);
  w.head_dim = static_cast<uint32_t>(D);
  w.n_head_kv = d.n_head_kv_at(il);
  const Init res{Init::residual, 0.0f};
  // build_qkv: q, k and v scale then add their biases, as does build_attn's output.
  const std::string qkv = names::tensor(Tensor::attn_qkv, il, "");
  if (d.kv_source(il) != il) {
    // Gemma 4's layers past shared_kv_layers: q only; K and V come from an earlier layer's cache
    // (llama.cpp creates their tensors where a file has them, and never reads them).
    w.shared_kv = true;
    w.q = t.linear(names::tensor(Tensor::attn_q, il, ""), E, Q, r.qkv);
    t.unapplied(names::tensor(Tensor::attn_k, il), {E, KV});
    t.unapplied(names::tensor(Tensor::attn_v, il), {E, KV});
  } else if (r.fused_qkv && t.has(qkv + ".weight")) {  // fused (create_tensor_qkv's first choice)
    LinearRules fused = r.qkv;
    fused.packed = false;  // split into rows below
    const Linear l = t.linear(qkv, E, Q + 2 * KV, fused);
    w.q = w.k = w.v = l;
    w.q.w = rows_of(l.w, 0, Q);
    w.k.w = rows_of(l.w, Q, KV);
    w.v.w = rows_of(l.w, Q + KV, KV);
    if (l.has_bias) {
      w.q.bias = span_of(l.bias, 0, Q);
      w.k.bias = span_of(l.bias, Q, KV);
      w.v.bias = span_of(l.bias, Q + KV, KV);
    }
  } else if (r.output_gate) {
    // attn_q {E, 2 D H}: per head D query rows then D gate rows; regrouped into [q | gate].
    LinearRules split = r.qkv;
    split.packed = false;
    Linear l = t.linear(names::tensor(Tensor::attn_q, il, ""), E, 2 * Q, split);
    std::vector<int64_t> perm(2 * Q);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < 2 * D; ++i)
        perm[h * 2 * D + i] = i < D ? h * D + i : Q + h * D + (i - D);
    const sy_tensor grouped = t.permuted(l.w, perm);
    w.q = w.gate = l;
    w.q.w = t.packed(rows_of(grouped, 0, Q));
    w.gate.w = t.packed(rows_of(grouped, Q, Q));
    w.gate.has_bias = false;  // attn_q's bias is never applied where the gate exists
    w.k = t.linear(names::tensor(Tensor::attn_k, il, ""), E, KV, r.qkv);
    w.v = t.linear(names::tensor(Tensor::attn_v, il, ""), E, KV, r.qkv);
  } else {
    w.q = t.linear(names::tensor(Tensor::attn_q, il, ""), E, Q, r.qkv);
    w.k = t.linear(names::tensor(Tensor::attn_k, il, ""), E, KV, r.qkv);
    const std::string v = names::tensor(Tensor::attn_v, il, "");
    if (!r.v_optional || t.has(v + ".weight")) w.v = t.linear(v, E, KV, r.qkv);
  }
  w.o = t.linear(names::tensor(Tensor::attn_output, il, ""), Q, E, r.out, res);
  if (r.sinks) w.sinks = &t.f32(names::tensor(Tensor::attn_sinks, il), {H}, {Init::normal, 0.5f});
  if (r.qk_norm) {
    w.q_norm = &t.norm(names::tensor(Tensor::attn_q_norm, il), D);
    if (w.shared_kv)
      t.unapplied(names::tensor(Tensor::attn_k_norm, il), {D});
    else
      w.k_norm = &t.norm(names::tensor(Tensor::attn_k_norm, il), D);
  }
}

uint64_t attention_scratch(const ModelDesc& d) {
  // q, k, v, the attention output and the gate, of the widest layer.
  uint64_t q = d.q_width(), kv = d.kv_width();
  for (uint32_t il = 0; il < d.layers.size(); ++il)
    q = std::max<uint64_t>(q, d.q_width_at(il)), kv = std::max<uint64_t>(kv, d.kv_width_at(il));
  return 3 * q + 2 * kv + 5 * 16;
}

void attention(LayerPass& p, const AttentionWeights& w, const sy_tensor& xn, const sy_tensor& out) {
  Backend& b = p.b;
  const ModelDesc& d = p.d;
  const int64_t T = p.n_tokens(), D = w.head_dim, H = d.n_head, HK = w.n_head_kv;
  const sy_tensor q = p.scratch.f32({D * H, T});
  const sy_tensor k = p.scratch.f32({D * HK, T});
  const sy_tensor v = p.scratch.f32({D * HK, T});
  const sy_tensor attn = p.scratch.f32({D * H, T});
  const sy_tensor q3 = view(q, {D, H, T}), k3 = view(k, {D, HK, T}), a3 = view(attn, {D, H, T});
  apply_linear(b, w.q, xn, q);
  // A layer that shares an earlier layer's KV (Gemma 4) computes q only and stores nothing.
  if (!w.shared_kv) {
    apply_linear(b, w.k, xn, k);
    // Gemma 4's V: RMS-normed per head without a weight; a layer without attn_v norms K's
    // projection into V (the families with v_optional have v_norm).
    const sy_tensor vh = view(v, {D, HK * T});
    if (w.v.present()) {
      apply_linear(b, w.v, xn, v);
      if (d.v_norm) norm(b, SY_NORM_RMS, vh, nullptr, d.rms_eps, vh);
    } else {
      norm(b, SY_NORM_RMS, view(k, {D, HK * T}), nullptr, d.rms_eps, vh);
    }
  }
  if (w.q_norm) {  // per head, before RoPE
    const sy_tensor qh = view(q, {D, H * T});
    b.rms_norm(&qh, w.q_norm, d.rms_eps, &qh);
  }
  if (w.k_norm) {
    const sy_tensor kh = view(k, {D, HK * T});
    b.rms_norm(&kh, w.k_norm, d.rms_eps, &kh);
  }
  const RopeParams& rope = w.swa ? d.rope_swa : d.rope;
  if (rope.enabled) {
    const sy_tensor* factors = rope.factors ? p.w.rope_freqs : nullptr;
    apply_rope(b, rope, factors, q3, p.bt.pos.data());
    if (!w.shared_kv) apply_rope(b, rope, factors, k3, p.bt.pos.data());
  }
  if (p.q_temp.struct_size) b.mul(&q, &p.q_temp, &q);  // after RoPE, as llama.cpp scales Qcur
  paged_attention(b, p.bt, p.cache, w.cache_layer, q3, w.shared_kv ? sy_tensor{} : k,
                  w.shared_kv ? sy_tensor{} : v, a3, static_cast<uint32_t>(HK), d.attn_scale,
                  w.swa ? d.window : 0, w.sinks, d.attn_softcap);
  if (w.gate.present()) {  // att * sigmoid(gate), before the output projection
    const sy_tensor g = p.scratch.f32({D * H, T});
    apply_linear(b, w.gate, xn, g);
    unary(b, SY_UNARY_SIGMOID, g, g);
    b.mul(&attn, &g, &attn);
  }
  apply_linear(b, w.o, attn, out);
}

}  // namespace sy::model
