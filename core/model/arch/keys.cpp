#include "model/arch/keys.h"

#include <cmath>

#include "gguf/gguf.h"

namespace sy::model {

bool KeyReader::has(Key k) const {
  return file().find(name(k)) != nullptr;
}

size_t KeyReader::array_size(Key k) const {
  const gguf::Value* v = file().find(name(k));
  return v && v->type == gguf::ValueType::ARRAY ? v->array.size() : 0;
}

uint32_t KeyReader::uniform(Key k, const std::vector<uint32_t>& v,
                            const std::vector<bool>& which) const {
  uint32_t value = 0;
  bool seen = false;
  for (size_t l = 0; l < v.size(); ++l) {
    if (!which[l]) continue;
    if (seen && v[l] != value)
      throw fail(name(k) + " differs between layers (" + std::to_string(value) + " and " +
                 std::to_string(v[l]) + "); per-layer sizes are not supported");
    value = v[l];
    seen = true;
  }
  return value;
}

void KeyWriter::u32(Key k, uint32_t v) {
  w_.set(names::key(k, arch_), gguf::Value::of_u32(v));
}
void KeyWriter::f32(Key k, float v) {
  w_.set(names::key(k, arch_), gguf::Value::of_f32(v));
}
void KeyWriter::boolean(Key k, bool v) {
  w_.set(names::key(k, arch_), gguf::Value::of_bool(v));
}
void KeyWriter::str(Key k, const std::string& v) {
  w_.set(names::key(k, arch_), gguf::Value::of_str(v));
}
void KeyWriter::i32_array(Key k, const std::vector<int32_t>& v) {
  w_.set(names::key(k, arch_), gguf::Value::of_i32_array(v));
}

void KeyWriter::bool_array(Key k, const std::vector<int32_t>& v) {
  std::vector<gguf::Value> items;
  for (int32_t b : v) items.push_back(gguf::Value::of_bool(b != 0));
  w_.set(names::key(k, arch_), gguf::Value::of_array(gguf::ValueType::BOOL, std::move(items)));
}

namespace {

// rope.scaling.type: llama.cpp asserts on an unknown name.
std::string rope_scaling_type(const KeyReader& k) {
  const std::string type = k.string(Key::rope_scaling_type, "linear");
  if (type != "none" && type != "linear" && type != "yarn" && type != "longrope")
    throw k.fail(k.name(Key::rope_scaling_type) + " '" + type +
                 "' is unknown (llama.cpp knows none, linear, yarn, longrope)");
  return type;
}

}  // namespace

void read_common_keys(const KeyReader& k, ModelDesc& d) {
  d.n_ctx = k.u32(Key::context_length);
  d.n_embd = k.u32(Key::embedding_length);
  d.n_layer = k.u32(Key::block_count);
  if (d.n_layer == 0 || d.n_layer > 512)
    throw k.fail(k.name(Key::block_count) + " must be in [1, 512]");
  d.rms_eps = k.f32(Key::layer_norm_rms_epsilon);
  // llama.cpp builds a non-causal mask when this is false; only causal attention is implemented.
  if (!k.boolean(Key::causal, true))
    throw k.fail(k.name(Key::causal) + " = false: non-causal attention is not implemented");
  d.n_expert = k.u32(Key::expert_count, 0u);
  d.n_expert_used = k.u32(Key::expert_used_count, 0u);
  if (d.n_expert > 0 && (d.n_expert_used == 0 || d.n_expert_used > d.n_expert))
    throw k.fail(k.name(Key::expert_used_count) + " must be in [1, " + k.name(Key::expert_count) +
                 "]");
  // More than one group switches build_moe_ffn to grouped top-k selection.
  for (Key g : {Key::expert_group_count, Key::expert_group_used_count})
    if (const uint32_t n = k.u32(g, 0u); n > 1)
      throw k.fail(k.name(g) + " = " + std::to_string(n) +
                   ": grouped expert selection is not implemented");
  const std::string embd = names::tensor(names::Tensor::token_embd);
  const gguf::TensorInfo* t = k.file().find_tensor(embd);
  if (!t) throw k.fail("missing tensor " + embd);
  d.n_vocab = static_cast<uint32_t>(t->ne[1]);
  if (auto v = k.file().get_uint(k.name(Key::vocab_size)); v && *v != d.n_vocab)
    throw k.fail(k.name(Key::vocab_size) + " disagrees with " + embd);
  d.tied_output = k.file().find_tensor(names::tensor(names::Tensor::output)) == nullptr;
  rope_scaling_type(k);
}

void write_common_keys(KeyWriter& k, const ModelDesc& d) {
  k.u32(Key::vocab_size, d.n_vocab);
  k.u32(Key::context_length, d.n_ctx);
  k.u32(Key::embedding_length, d.n_embd);
  k.u32(Key::block_count, d.n_layer);
}

RopeParams read_rope(const KeyReader& k, const ModelDesc& d, uint32_t n_rot, bool neox) {
  const std::string type = rope_scaling_type(k);
  if (type == "longrope")
    throw k.fail(k.name(Key::rope_scaling_type) + " 'longrope' is not implemented");
  RopeParams r;
  r.enabled = true;
  r.neox = neox;
  r.n_rot = n_rot;
  r.freq_base = k.f32(Key::rope_freq_base, 10000.0f);
  if (!(r.freq_base > 0.0f)) throw k.fail(k.name(Key::rope_freq_base) + " must be positive");
  float factor = 0.0f;
  if (auto v = k.file().get_float(k.name(Key::rope_scaling_factor)))
    factor = static_cast<float>(*v);
  else if (auto old = k.file().get_float(k.name(Key::rope_scale_linear)))
    factor = static_cast<float>(*old);
  if (factor < 0.0f) throw k.fail(k.name(Key::rope_scaling_factor) + " must not be negative");
  r.freq_scale = type == "none" || factor == 0.0f ? 1.0f : 1.0f / factor;
  r.n_ctx_orig = k.u32(Key::rope_scaling_original_context_length, d.n_ctx);
  if (r.n_ctx_orig == 0) r.n_ctx_orig = d.n_ctx;
  if (type == "yarn") {
    r.ext_factor = 1.0f;
    const float f = 1.0f / r.freq_scale;
    const float mscale = f <= 1.0f ? 1.0f : 0.1f * std::log(f) + 1.0f;
    r.attn_factor = mscale * (1.0f / (1.0f + 0.1f * std::log(f)));
  }
  r.attn_factor *= k.f32(Key::rope_scaling_attn_factor, 1.0f);
  return r;
}

uint32_t read_full_rotation(const KeyReader& k, const ModelDesc& d) {
  const uint32_t n_rot = k.u32(Key::rope_dimension_count, d.head_dim);
  if (n_rot != d.head_dim)
    throw k.fail(k.name(Key::rope_dimension_count) + " (" + std::to_string(n_rot) +
                 ") must be the head size (" + std::to_string(d.head_dim) + ")");
  return n_rot;
}

void read_yarn_keys(const KeyReader& k, RopeParams& r) {
  r.beta_fast = k.f32(Key::rope_scaling_yarn_beta_fast, r.beta_fast);
  r.beta_slow = k.f32(Key::rope_scaling_yarn_beta_slow, r.beta_slow);
  const float log_mul = k.f32(Key::rope_scaling_yarn_log_multiplier, 0.0f);
  if (r.ext_factor == 0.0f || log_mul == 0.0f) return;
  const float f = 1.0f / r.freq_scale;
  auto mscale = [f](float m) { return f <= 1.0f ? 1.0f : 0.1f * m * std::log(f) + 1.0f; };
  r.attn_factor = mscale(1.0f) / mscale(log_mul) * (1.0f / (1.0f + 0.1f * std::log(f))) *
                  k.f32(Key::rope_scaling_attn_factor, 1.0f);
}

HeadCounts read_head_counts(const KeyReader& k, ModelDesc& d) {
  HeadCounts h;
  h.heads = k.per_layer(Key::head_count, std::vector<uint32_t>(d.n_layer, 0));
  h.kv = k.per_layer(Key::head_count_kv, h.heads);
  return h;
}

void set_heads(const KeyReader& k, ModelDesc& d, const HeadCounts& h,
               const std::vector<bool>& attn) {
  d.n_head = k.uniform(Key::head_count, h.heads, attn);
  d.n_head_kv = k.uniform(Key::head_count_kv, h.kv, attn);
  bool any = false;
  for (bool a : attn) any |= a;
  if (!any) return;
  if (d.n_head == 0) throw k.fail(k.name(Key::head_count) + " must be positive");
  if (d.n_head_kv == 0 || d.n_head % d.n_head_kv != 0)
    throw k.fail(k.name(Key::head_count_kv) + " must divide " + k.name(Key::head_count));
}

void read_head_dim(const KeyReader& k, ModelDesc& d, bool scale_key) {
  if (d.n_head == 0) return;
  const uint32_t kl = k.u32(Key::key_length, d.n_embd / d.n_head);
  const uint32_t vl = k.u32(Key::value_length, d.n_embd / d.n_head);
  if (kl == 0) throw k.fail(k.name(Key::key_length) + " must be positive");
  if (vl != kl)
    throw k.fail(k.name(Key::value_length) + " (" + std::to_string(vl) +
                 ") differs from key_length (" + std::to_string(kl) + "): not supported");
  d.head_dim = kl;
  d.attn_scale = 1.0f / std::sqrt(static_cast<float>(kl));
  if (scale_key)
    if (const float s = k.f32(Key::attention_scale, 0.0f); s != 0.0f) d.attn_scale = s;
}

void read_dense_attention(const KeyReader& k, ModelDesc& d, bool neox) {
  set_heads(k, d, read_head_counts(k, d), std::vector<bool>(d.n_layer, true));
  read_head_dim(k, d, false);
  d.rope = read_rope(k, d, read_full_rotation(k, d), neox);
}

void write_dense_attention(KeyWriter& k, const ModelDesc& d) {
  k.u32(Key::head_count, d.n_head);
  k.u32(Key::head_count_kv, d.n_head_kv);
  k.u32(Key::key_length, d.head_dim);
  k.u32(Key::value_length, d.head_dim);
  k.u32(Key::rope_dimension_count, d.rope.n_rot);
  k.f32(Key::rope_freq_base, d.rope.freq_base);
}

void read_swa_period(const KeyReader& k, ModelDesc& d, uint32_t period) {
  if (k.has(Key::sliding_window_pattern) && k.array_size(Key::sliding_window_pattern) == 0)
    period = k.u32(Key::sliding_window_pattern);
  d.set_swa_period(period);
}

void write_swa_period(KeyWriter& k, const ModelDesc& d, uint32_t period) {
  uint32_t first_global = 0;  // its index + 1 is the period; 0 when every layer is local
  while (first_global < d.n_layer && d.layers[first_global].swa) ++first_global;
  const uint32_t p = first_global < d.n_layer ? first_global + 1 : 0;
  if (p != period) k.u32(Key::sliding_window_pattern, p);
}

float read_freq_base_swa(const KeyReader& k, float def) {
  const float base = k.f32(Key::rope_freq_base_swa, def);
  if (!(base > 0.0f)) throw k.fail(k.name(Key::rope_freq_base_swa) + " must be positive");
  return base;
}

uint32_t read_n_ff(const KeyReader& k, const ModelDesc& d, const std::vector<bool>& which) {
  return k.uniform(Key::feed_forward_length,
                   k.per_layer(Key::feed_forward_length, std::vector<uint32_t>(d.n_layer, 0)),
                   which);
}

}  // namespace sy::model
