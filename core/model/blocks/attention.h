// Attention over the paged KV cache, as llama.cpp's build_qkv + build_attn compute it: q, k and v
// projections with their optional bias and scale, optional per-head q/k RMS norms before RoPE
// (Qwen3, Qwen3.5, LFM2), RoPE (adjacent or NEOX pairs, partial rotary), causal GQA softmax with
// an optional sliding window, an optional sigmoid output gate (Qwen3.5's gated attention), and
// the output projection.
#pragma once

#include <cstdint>

#include "model/layer_pass.h"
#include "model/tensor_table.h"

namespace sy::model {

struct AttentionWeights {
  Linear q, k, v, o;
  Linear gate;  // the output gate (Qwen3.5: the second half of each attn_q head), or absent
  const sy_tensor* q_norm = nullptr;  // F32 {head_dim}, or null
  const sy_tensor* k_norm = nullptr;
  uint32_t cache_layer = 0;  // ordinal among attention layers: the KV cache layer
  bool shared_kv = false;    // Gemma 4: no K or V of its own; reads cache_layer as it is
  bool swa = false;          // over the sliding window, with the window's RoPE
  const sy_tensor* sinks = nullptr;      // F32 {n_head}: gpt-oss's sink logits, or null
  uint32_t head_dim = 0, n_head_kv = 0;  // this layer's (ModelDesc::head_dim_at, n_head_kv_at)
};

struct AttentionRules {
  LinearRules qkv;  // q, k, v (and a fused attn_qkv)
  LinearRules out;
  bool qk_norm = false;      // attn_q_norm / attn_k_norm {head_dim} (required)
  bool output_gate = false;  // attn_q is {E, 2 * head_dim * n_head}: per head [q | gate]
  bool fused_qkv = true;     // attn_qkv (split into row views) may replace q, k and v
  bool sinks = false;        // attn_sinks {n_head} (required)
  bool v_optional = false;   // Gemma 4: a layer without attn_v uses K's projection as V
};

// The block's tensors of layer il in llama.cpp's order; rules say which optional ones it takes.
void attention_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const AttentionRules& r,
                       AttentionWeights& w);
// Scratch floats per token.
uint64_t attention_scratch(const ModelDesc& d);
// out{E, T} = attention(xn{E, T}).
void attention(LayerPass& p, const AttentionWeights& w, const sy_tensor& xn, const sy_tensor& out);

}  // namespace sy::model
