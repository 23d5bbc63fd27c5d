// Test files: small random llama GGUFs with llama.cpp's optional tensors and keys (biases,
// per-tensor scales, RoPE frequency factors, a fused QKV, a head size apart from n_embd / n_head,
// linear and YaRN RoPE scaling), written with the project's GGUF writer.
#pragma once

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "switchyard/abi/types.h"
#include "test_rng.h"

namespace sy::test {

struct LlamaVariant {
  int n_embd = 64, n_layer = 2, n_ff = 96, n_head = 4, n_head_kv = 2, head_dim = 16;
  int n_vocab = 300, n_ctx = 16384;
  bool biases = false;       // attn_{q,k,v,output}.bias and ffn_{gate,up,down}.bias
  bool scales = false;       // `.scale` on every projection, and `.input_scale` (never applied)
  bool rope_freqs = false;   // rope_freqs.weight
  bool fused_qkv = false;    // attn_qkv.weight (and .bias / .scale) instead of attn_q/k/v
  std::string rope_scaling;  // rope.scaling.type when not empty
  float rope_factor = 0, rope_attn_factor = 0;            // written when not 0
  uint32_t orig_ctx = 0;                                  // rope.scaling.original_context_length
  std::vector<std::pair<std::string, gguf::Value>> keys;  // extra metadata
  std::vector<std::string> extra_tensors;                 // extra F32 {n_embd} tensors
};

inline void write_llama_variant(const LlamaVariant& v, uint64_t seed,
                                const std::filesystem::path& path) {
  using gguf::Value;
  // Optional tensors draw from their own stream, so a variant differs from the plain file only
  // in what it adds.
  XorShiftRng rng(seed, 0x11a3a), opt(seed, 0x0b71);
  gguf::Writer w;
  w.set("general.architecture", Value::of_str("llama"));
  w.set("llama.context_length", Value::of_u32(v.n_ctx));
  w.set("llama.embedding_length", Value::of_u32(v.n_embd));
  w.set("llama.block_count", Value::of_u32(v.n_layer));
  w.set("llama.feed_forward_length", Value::of_u32(v.n_ff));
  w.set("llama.attention.head_count", Value::of_u32(v.n_head));
  w.set("llama.attention.head_count_kv", Value::of_u32(v.n_head_kv));
  w.set("llama.attention.key_length", Value::of_u32(v.head_dim));
  w.set("llama.attention.value_length", Value::of_u32(v.head_dim));
  w.set("llama.attention.layer_norm_rms_epsilon", Value::of_f32(1e-5f));
  w.set("llama.rope.freq_base", Value::of_f32(10000.0f));
  if (!v.rope_scaling.empty()) w.set("llama.rope.scaling.type", Value::of_str(v.rope_scaling));
  if (v.rope_factor != 0) w.set("llama.rope.scaling.factor", Value::of_f32(v.rope_factor));
  if (v.rope_attn_factor != 0)
    w.set("llama.rope.scaling.attn_factor", Value::of_f32(v.rope_attn_factor));
  if (v.orig_ctx) w.set("llama.rope.scaling.original_context_length", Value::of_u32(v.orig_ctx));
  w.set("tokenizer.ggml.model", Value::of_str("no_vocab"));
  for (const auto& [k, val] : v.keys) w.set(k, val);

  auto add = [&](const std::string& name, std::vector<int64_t> ne, float lo, float hi,
                 XorShiftRng* from = nullptr) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    const std::vector<float> data = (from ? *from : rng).vec(static_cast<size_t>(n), lo, hi);
    w.add_tensor(name, SY_DTYPE_F32, ne, data.data(), data.size() * sizeof(float));
  };
  // A projection `base` {in, out}: weights of unit gain, and the optional epilogue tensors.
  auto proj = [&](const std::string& base, int64_t in, int64_t out) {
    const float a = std::sqrt(3.0f / float(in));
    add(base + ".weight", {in, out}, -a, a);
    if (v.biases) add(base + ".bias", {out}, -0.2f, 0.2f, &opt);
    if (v.scales) {
      add(base + ".scale", {1}, 0.5f, 1.5f, &opt);
      add(base + ".input_scale", {1}, 0.5f, 1.5f, &opt);
    }
  };
  const int64_t E = v.n_embd, F = v.n_ff, Q = int64_t(v.head_dim) * v.n_head;
  const int64_t KV = int64_t(v.head_dim) * v.n_head_kv;
  add("token_embd.weight", {E, v.n_vocab}, -1.0f, 1.0f);
  add("output_norm.weight", {E}, 0.9f, 1.1f);
  add("output.weight", {E, v.n_vocab}, -0.2f, 0.2f);
  if (v.rope_freqs) add("rope_freqs.weight", {v.head_dim / 2}, 1.0f, 4.0f, &opt);
  for (int l = 0; l < v.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {E}, 0.9f, 1.1f);
    if (v.fused_qkv) {
      proj(b + "attn_qkv", E, Q + 2 * KV);
    } else {
      proj(b + "attn_q", E, Q);
      proj(b + "attn_k", E, KV);
      proj(b + "attn_v", E, KV);
    }
    proj(b + "attn_output", Q, E);
    add(b + "ffn_norm.weight", {E}, 0.9f, 1.1f);
    proj(b + "ffn_gate", E, F);
    proj(b + "ffn_up", E, F);
    proj(b + "ffn_down", F, E);
  }
  for (const auto& name : v.extra_tensors) add(name, {E}, -1.0f, 1.0f, &opt);
  w.write(path);
}

}  // namespace sy::test
