#include "modelgen/generator.h"

#include <cmath>
#include <stdexcept>

#include "gguf/gguf.h"
#include "modelgen/generator_detail.h"
#include "modelgen/quant_mix.h"
#include "switchyard/common/dtype.h"
#include "text/tokenizer.h"

namespace sy::model {
namespace detail {

const dtype::FileType& file_type(const std::string& d) {
  if (const dtype::FileType* f = dtype::find_file_type(d)) return *f;
  throw std::invalid_argument("unknown dtype '" + d + "' (expected " + dtype::file_type_names() +
                              ")");
}

void check_whole_blocks(const dtype::FileType& ft, const std::string& dtype_name,
                        const std::pair<const char*, uint32_t>* dims, size_t n_dims) {
  // A file type of 32-value blocks has no smaller type to fall back to (llama-quantize refuses
  // such rows too); the K-quant types fall back per tensor (QuantMix).
  if (dtype::block_elems(ft.base) != dtype::kQ8Block) return;
  for (size_t i = 0; i < n_dims; ++i)
    if (dims[i].second % dtype::kQ8Block)
      throw std::invalid_argument(dtype_name + " needs " + dims[i].first +
                                  " to be a multiple of 32, it is " +
                                  std::to_string(dims[i].second));
}

void set_file_type(gguf::Writer& w, const dtype::FileType& ft) {
  w.set("general.file_type", gguf::Value::of_u32(ft.id));
  if (dtype::block_elems(ft.base) > 1)
    w.set("general.quantization_version", gguf::Value::of_u32(2));
}

void write_vocab(gguf::Writer& w, uint32_t n_vocab) {
  using gguf::Value;
  const text::Vocab vocab = text::byte_level_vocab(static_cast<int32_t>(n_vocab));
  std::vector<int32_t> types;
  for (auto t : vocab.types) types.push_back(static_cast<int32_t>(t));
  w.set("tokenizer.ggml.model", Value::of_str("llama"));
  w.set("tokenizer.ggml.tokens", Value::of_str_array(vocab.tokens));
  w.set("tokenizer.ggml.scores", Value::of_f32_array(vocab.scores));
  w.set("tokenizer.ggml.token_type", Value::of_i32_array(types));
  w.set("tokenizer.ggml.bos_token_id", Value::of_u32(vocab.bos));
  w.set("tokenizer.ggml.eos_token_id", Value::of_u32(vocab.eos));
  w.set("tokenizer.ggml.unknown_token_id", Value::of_u32(vocab.unk));
  w.set("tokenizer.ggml.add_bos_token", Value::of_bool(true));
}

}  // namespace detail

using detail::Rng;

ModelShape preset_shape(const std::string& name) {
  ModelShape s;
  if (name == "dense-tiny") return s;
  if (name == "dense-small") {
    s.n_vocab = 512; s.n_ctx = 2048; s.n_embd = 256; s.n_layer = 4; s.n_ff = 704;
    s.n_head = 8; s.n_head_kv = 4;
    return s;
  }
  if (name == "dense-100m") {  // 99.9M parameters
    s.n_vocab = 4096; s.n_ctx = 4096; s.n_embd = 768; s.n_layer = 12; s.n_ff = 2816;
    s.n_head = 12; s.n_head_kv = 4; s.tied_output = true;
    return s;
  }
  if (detail::hybrid_preset(name, s)) return s;
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown preset '" + name + "' (known: " + known + ")");
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names = {"dense-tiny", "dense-small", "dense-100m"};
  for (auto& n : detail::hybrid_preset_names()) names.push_back(n);
  return names;
}

uint64_t count_params(const ModelShape& s) {
  if (s.arch != "llama" || s.n_expert > 0) return detail::count_params(s, false);
  const uint64_t E = s.n_embd, hd = s.n_embd / s.n_head;
  const uint64_t per_layer = 2 * E + E * E * 2 + 2 * E * hd * s.n_head_kv + 3 * E * s.n_ff;
  return uint64_t(s.n_vocab) * E * (s.tied_output ? 1 : 2) + E + per_layer * s.n_layer;
}

void write_random_llama(const ModelShape& s, const std::string& dtype, uint64_t seed,
                        const std::filesystem::path& path) {
  if (s.arch != "llama") return detail::write_random_ssm(s, dtype, seed, path);
  const dtype::FileType& ft = detail::file_type(dtype);
  if (s.n_head == 0 || s.n_embd % s.n_head || s.n_head_kv == 0 || s.n_head % s.n_head_kv)
    throw std::invalid_argument("n_head must divide n_embd and n_head_kv must divide n_head");
  if (s.n_vocab < 259) throw std::invalid_argument("n_vocab must be at least 259 (3 specials + 256 bytes)");
  const std::pair<const char*, uint32_t> dims[] = {{"n_embd", s.n_embd}, {"n_ff", s.n_ff}};
  detail::check_whole_blocks(ft, dtype, dims, 2);
  const QuantMix mix(ft, s);
  const uint32_t hd = s.n_embd / s.n_head;
  using gguf::Value;
  gguf::Writer w;
  w.set("general.architecture", Value::of_str("llama"));
  w.set("general.name", Value::of_str("switchyard-random-" + std::to_string(count_params(s) / 1000000) + "M"));
  detail::set_file_type(w, ft);
  w.set("llama.vocab_size", Value::of_u32(s.n_vocab));
  w.set("llama.context_length", Value::of_u32(s.n_ctx));
  w.set("llama.embedding_length", Value::of_u32(s.n_embd));
  w.set("llama.block_count", Value::of_u32(s.n_layer));
  w.set("llama.feed_forward_length", Value::of_u32(s.n_ff));
  w.set("llama.attention.head_count", Value::of_u32(s.n_head));
  w.set("llama.attention.head_count_kv", Value::of_u32(s.n_head_kv));
  w.set("llama.rope.dimension_count", Value::of_u32(hd));
  w.set("llama.rope.freq_base", Value::of_f32(s.rope_freq_base));
  w.set("llama.attention.layer_norm_rms_epsilon", Value::of_f32(s.rms_eps));
  if (s.n_expert > 0) {  // Mixtral-style MoE in every layer
    if (s.n_expert_used == 0 || s.n_expert_used > s.n_expert)
      throw std::invalid_argument("n_expert_used must be in [1, n_expert]");
    w.set("llama.expert_count", Value::of_u32(s.n_expert));
    w.set("llama.expert_used_count", Value::of_u32(s.n_expert_used));
  }

  detail::write_vocab(w, s.n_vocab);

  Rng rng{seed};
  std::vector<float> f;
  std::vector<uint8_t> bytes;
  // Matrices get N(0, gain^2 / fan_in) so activations keep unit scale through the stack.
  auto add = [&](const std::string& name, std::vector<int64_t> ne, float stddev, bool is_norm) {
    int64_t n = 1;
    for (auto d : ne) n *= d;
    f.resize(n);
    for (auto& v : f) v = is_norm ? 1.0f + 0.1f * rng.normal() : stddev * rng.normal();
    const uint32_t t = is_norm ? uint32_t(SY_DTYPE_F32) : mix.type_for(name, ne[0]);
    bytes.resize(dtype::row_bytes(t, ne[0]) * (n / ne[0]));
    const int64_t rb = dtype::row_bytes(t, ne[0]);
    for (int64_t r = 0; r < n / ne[0]; ++r) dtype::row_from_f32(t, f.data() + r * ne[0], bytes.data() + r * rb, ne[0]);
    w.add_tensor(name, t, ne, bytes.data(), bytes.size());
  };
  const int64_t E = s.n_embd, V = s.n_vocab, F = s.n_ff, Q = int64_t(hd) * s.n_head, KV = int64_t(hd) * s.n_head_kv;
  const float res_gain = 1.0f / std::sqrt(2.0f * s.n_layer);
  add("token_embd.weight", {E, V}, 1.0f, false);
  add("output_norm.weight", {E}, 0, true);
  if (!s.tied_output) add("output.weight", {E, V}, 1.0f / std::sqrt(float(E)), false);
  for (uint32_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {E}, 0, true);
    add(b + "attn_q.weight", {E, Q}, 1.0f / std::sqrt(float(E)), false);
    add(b + "attn_k.weight", {E, KV}, 1.0f / std::sqrt(float(E)), false);
    add(b + "attn_v.weight", {E, KV}, 1.0f / std::sqrt(float(E)), false);
    add(b + "attn_output.weight", {Q, E}, res_gain / std::sqrt(float(Q)), false);
    add(b + "ffn_norm.weight", {E}, 0, true);
    if (s.n_expert > 0) {
      const int64_t X = s.n_expert;
      detail::add_router(w, rng, b + "ffn_gate_inp.weight", E, X);
      add(b + "ffn_gate_exps.weight", {E, F, X}, 1.0f / std::sqrt(float(E)), false);
      add(b + "ffn_up_exps.weight", {E, F, X}, 1.0f / std::sqrt(float(E)), false);
      add(b + "ffn_down_exps.weight", {F, E, X}, res_gain / std::sqrt(float(F)), false);
      continue;
    }
    add(b + "ffn_gate.weight", {E, F}, 1.0f / std::sqrt(float(E)), false);
    add(b + "ffn_up.weight", {E, F}, 1.0f / std::sqrt(float(E)), false);
    add(b + "ffn_down.weight", {F, E}, res_gain / std::sqrt(float(F)), false);
  }
  w.write(path);
}

}  // namespace sy::model
