// The architecture table and the hyperparameter readers: the keys llama.cpp's loader reads for
// llama, mamba and jamba (llama_model_base::load_hparams, each arch's load_arch_hparams and the
// context's rope settings), each either implemented, accepted at its neutral value, or refused by
// name. Keys an arch never reads are ignored, as llama.cpp ignores them (ARCH-KEYS.md).
#include "model/arch.h"

#include <algorithm>
#include <cmath>

#include "gguf/gguf.h"
#include "model/metadata_reader.h"

namespace sy::model {
namespace {

// All entries equal (the decoder's layers of one kind share their sizes).
uint32_t uniform(const MetadataReader& md, const std::string& key, const std::vector<uint32_t>& v,
                 const std::vector<bool>& which) {
  uint32_t value = 0;
  bool seen = false;
  for (size_t l = 0; l < v.size(); ++l) {
    if (!which[l]) continue;
    if (seen && v[l] != value)
      throw md.fail(key + " differs between layers (" + std::to_string(value) + " and " +
                    std::to_string(v[l]) + "); per-layer sizes are not supported");
    value = v[l];
    seen = true;
  }
  return value;
}

// rope.scaling.type: llama.cpp asserts on an unknown name.
std::string rope_scaling_type(const MetadataReader& md, const std::string& p) {
  const std::string type = md.string(p + "rope.scaling.type", "linear");
  if (type != "none" && type != "linear" && type != "yarn" && type != "longrope")
    throw md.fail(p + "rope.scaling.type '" + type +
                  "' is unknown (llama.cpp knows none, linear, yarn, longrope)");
  return type;
}

// Keys of llama.cpp's generic load_hparams that every arch here shares.
void read_common(const MetadataReader& md, DecoderHParams& h) {
  const gguf::File& f = md.file();
  const std::string p = h.arch + ".";
  h.n_ctx = md.u32(p + "context_length", std::nullopt);
  h.n_embd = md.u32(p + "embedding_length", std::nullopt);
  h.n_layer = md.u32(p + "block_count", std::nullopt);
  if (h.n_layer == 0 || h.n_layer > 512) throw md.fail(p + "block_count must be in [1, 512]");
  h.rms_eps = md.f32(p + "attention.layer_norm_rms_epsilon", std::nullopt);
  // llama.cpp builds a non-causal mask when this is false; only causal attention is implemented.
  if (!md.boolean(p + "attention.causal", true))
    throw md.fail(p + "attention.causal = false: non-causal attention is not implemented");
  h.n_expert = md.u32(p + "expert_count", 0u);
  h.n_expert_used = md.u32(p + "expert_used_count", 0u);
  if (h.n_expert > 0 && (h.n_expert_used == 0 || h.n_expert_used > h.n_expert))
    throw md.fail(p + "expert_used_count must be in [1, " + p + "expert_count]");
  // More than one group switches build_moe_ffn to grouped top-k selection.
  for (const char* k : {"expert_group_count", "expert_group_used_count"})
    if (const uint32_t g = md.u32(p + k, 0u); g > 1)
      throw md.fail(p + k + " = " + std::to_string(g) +
                    ": grouped expert selection is not implemented");
  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw md.fail("missing tensor token_embd.weight");
  h.n_vocab = static_cast<uint32_t>(embd->ne[1]);
  if (auto v = f.get_uint(p + "vocab_size"); v && *v != h.n_vocab)
    throw md.fail(p + "vocab_size disagrees with token_embd.weight");
  h.tied_output = f.find_tensor("output.weight") == nullptr;
  rope_scaling_type(md, p);  // llama.cpp asserts on an unknown type whether or not it ropes
}

// The llama.cpp context's rope settings from the file (llama_context's constructor): the
// scaling type picks linear or YaRN interpolation; YaRN's magnitude correction cancels the one
// ggml applies, then rope.scaling.attn_factor multiplies.
RopeParams read_rope(const MetadataReader& md, const DecoderHParams& h, uint32_t n_rot) {
  const std::string p = h.arch + ".";
  const std::string type = rope_scaling_type(md, p);
  if (type == "longrope") throw md.fail(p + "rope.scaling.type 'longrope' is not implemented");
  RopeParams r;
  r.enabled = true;
  r.n_rot = n_rot;
  r.freq_base = md.f32(p + "rope.freq_base", 10000.0f);
  if (!(r.freq_base > 0.0f)) throw md.fail(p + "rope.freq_base must be positive");
  float factor = 0.0f;
  if (auto v = md.file().get_float(p + "rope.scaling.factor"))
    factor = static_cast<float>(*v);
  else if (auto old = md.file().get_float(p + "rope.scale_linear"))
    factor = static_cast<float>(*old);
  if (factor < 0.0f) throw md.fail(p + "rope.scaling.factor must not be negative");
  r.freq_scale = type == "none" || factor == 0.0f ? 1.0f : 1.0f / factor;
  r.n_ctx_orig = md.u32(p + "rope.scaling.original_context_length", h.n_ctx);
  if (r.n_ctx_orig == 0) r.n_ctx_orig = h.n_ctx;
  if (type == "yarn") {
    r.ext_factor = 1.0f;
    const float f = 1.0f / r.freq_scale;
    const float mscale = f <= 1.0f ? 1.0f : 0.1f * std::log(f) + 1.0f;
    r.attn_factor = mscale * (1.0f / (1.0f + 0.1f * std::log(f)));
  }
  r.attn_factor *= md.f32(p + "rope.scaling.attn_factor", 1.0f);
  return r;
}

void read_llama(const MetadataReader& md, DecoderHParams& h) {
  const std::string p = h.arch + ".";
  const std::vector<bool> all(h.n_layer, true);
  h.n_ff = uniform(
      md, p + "feed_forward_length",
      md.per_layer(p + "feed_forward_length", h.n_layer, std::vector<uint32_t>(h.n_layer, 0)), all);
  const auto heads =
      md.per_layer(p + "attention.head_count", h.n_layer, std::vector<uint32_t>(h.n_layer, 0));
  h.n_head = uniform(md, p + "attention.head_count", heads, all);
  h.n_head_kv = uniform(md, p + "attention.head_count_kv",
                        md.per_layer(p + "attention.head_count_kv", h.n_layer, heads), all);
  if (h.n_head == 0) throw md.fail(p + "attention.head_count must be positive");
  if (h.n_head_kv == 0 || h.n_head % h.n_head_kv != 0)
    throw md.fail(p + "attention.head_count_kv must divide " + p + "attention.head_count");
  const uint32_t k = md.u32(p + "attention.key_length", h.n_embd / h.n_head);
  const uint32_t v = md.u32(p + "attention.value_length", h.n_embd / h.n_head);
  if (k == 0) throw md.fail(p + "attention.key_length must be positive");
  // llama.cpp's llama graph asserts both; its loader names n_rot itself.
  if (v != k)
    throw md.fail(p + "attention.value_length (" + std::to_string(v) +
                  ") differs from key_length (" + std::to_string(k) +
                  "): the llama graph needs them equal");
  const uint32_t n_rot = md.u32(p + "rope.dimension_count", k);
  if (n_rot != k)
    throw md.fail(p + "rope.dimension_count: invalid n_rot: " + std::to_string(n_rot) +
                  ", expected " + std::to_string(k));
  h.head_dim = k;
  h.attn_scale = 1.0f / std::sqrt(static_cast<float>(k));
  h.rope = read_rope(md, h, n_rot);
  h.moe_normalize = true;  // llama.cpp's llama graph: softmax gating, norm_w = true (Mixtral)
  h.layers.assign(h.n_layer,
                  LayerSpec{Mixer::attention, h.n_expert > 0 ? FfnKind::moe : FfnKind::dense});
}

void read_ssm_sizes(const MetadataReader& md, DecoderHParams& h) {
  const std::string p = h.arch + ".";
  h.d_conv = md.u32(p + "ssm.conv_kernel", std::nullopt);
  h.d_inner = md.u32(p + "ssm.inner_size", std::nullopt);
  h.d_state = md.u32(p + "ssm.state_size", std::nullopt);
  h.dt_rank = md.u32(p + "ssm.time_step_rank", std::nullopt);
  if (h.d_inner != 2 * h.n_embd)
    throw md.fail(p + "ssm.inner_size must be 2 * embedding_length (llama.cpp supports only that)");
  if (h.d_conv == 0 || h.d_state == 0 || h.dt_rank == 0)
    throw md.fail(p + "ssm.conv_kernel, state_size and time_step_rank must be positive");
}

void read_mamba(const MetadataReader& md, DecoderHParams& h) {
  read_ssm_sizes(md, h);
  h.dt_b_c_norms = md.boolean(h.arch + ".ssm.dt_b_c_rms", false);  // FalconMamba: no weights
  h.layers.assign(h.n_layer, LayerSpec{Mixer::ssm, FfnKind::none});
}

void read_jamba(const MetadataReader& md, DecoderHParams& h) {
  const std::string p = h.arch + ".";
  read_ssm_sizes(md, h);
  h.dt_b_c_norms = true;  // jamba's required ssm_{dt,b,c}_norm tensors switch the norms on
  const auto heads =
      md.per_layer(p + "attention.head_count", h.n_layer, std::vector<uint32_t>(h.n_layer, 0));
  const auto kv = md.per_layer(p + "attention.head_count_kv", h.n_layer, heads);
  std::vector<bool> attn(h.n_layer), ffn(h.n_layer, true);
  for (uint32_t l = 0; l < h.n_layer; ++l) attn[l] = kv[l] != 0;  // 0: a Mamba layer
  h.n_ff = uniform(
      md, p + "feed_forward_length",
      md.per_layer(p + "feed_forward_length", h.n_layer, std::vector<uint32_t>(h.n_layer, 0)), ffn);
  h.n_head = uniform(md, p + "attention.head_count", heads, attn);
  h.n_head_kv = uniform(md, p + "attention.head_count_kv", kv, attn);
  if (std::find(attn.begin(), attn.end(), true) != attn.end()) {
    if (h.n_head == 0 || h.n_head % h.n_head_kv != 0)
      throw md.fail(p + "attention.head_count must be positive and a multiple of head_count_kv");
    // The graph splits attn_q {n_embd, n_embd} into value_length-wide heads and caches keys as
    // wide.
    const uint32_t v = md.u32(p + "attention.value_length", h.n_embd / h.n_head);
    const uint32_t k = md.u32(p + "attention.key_length", h.n_embd / h.n_head);
    if (k != v || v * h.n_head != h.n_embd)
      throw md.fail(p + "attention.key_length / value_length (" + std::to_string(k) + " / " +
                    std::to_string(v) + ") must both be embedding_length / head_count (" +
                    std::to_string(h.n_embd / h.n_head) + ") for jamba");
    h.head_dim = v;
    h.attn_scale = 1.0f / std::sqrt(static_cast<float>(v));
  }
  h.moe_normalize = false;  // jamba.cpp: build_moe_ffn with norm_w = false
  for (uint32_t l = 0; l < h.n_layer; ++l) {
    // As llama.cpp's loader: a layer is MoE when its router tensor is there.
    const bool moe = md.file().find_tensor("blk." + std::to_string(l) + ".ffn_gate_inp.weight");
    if (moe && h.n_expert == 0)
      throw md.fail(p + "expert_count is 0 but layer " + std::to_string(l) + " has ffn_gate_inp");
    h.layers.push_back(
        {attn[l] ? Mixer::attention : Mixer::ssm, moe ? FfnKind::moe : FfnKind::dense});
  }
}

constexpr ArchTensorRules kLlamaTensors{
    .qkv_bias = true,
    .out_bias = true,
    .ffn_bias = true,
    .rope_freqs = true,
    .ssm_norm_tensors = false,
    .ffn_scale_applied = true,
    .ssm_scale_applied = false,
    .exps_scale_applied = true,
};
// jamba.cpp: create_tensor_qkv (optional q/k/v biases), no output or FFN biases; its graph gives
// build_ffn and build_moe_ffn no scales, but build_attn the output scale.
constexpr ArchTensorRules kJambaTensors{
    .qkv_bias = true,
    .out_bias = false,
    .ffn_bias = false,
    .rope_freqs = false,
    .ssm_norm_tensors = true,
    .ffn_scale_applied = false,
    .ssm_scale_applied = true,
    .exps_scale_applied = false,
};
constexpr ArchTensorRules kMambaTensors{
    .ssm_scale_applied = true,
};

const ArchSpec kArchs[] = {
    {"llama", &read_llama, kLlamaTensors},
    {"mamba", &read_mamba, kMambaTensors},
    {"jamba", &read_jamba, kJambaTensors},
};

}  // namespace

const ArchSpec* find_arch(std::string_view name) {
  for (const ArchSpec& a : kArchs)
    if (a.name == name) return &a;
  return nullptr;
}

const char* supported_archs() {
  return "llama, mamba, jamba";
}

uint32_t DecoderHParams::n_attn_layers() const {
  return static_cast<uint32_t>(std::count_if(layers.begin(), layers.end(), [](const LayerSpec& s) {
    return s.mixer == Mixer::attention;
  }));
}

uint32_t DecoderHParams::n_moe_layers() const {
  return static_cast<uint32_t>(std::count_if(
      layers.begin(), layers.end(), [](const LayerSpec& s) { return s.ffn == FfnKind::moe; }));
}

std::vector<bool> DecoderHParams::recurrent() const {
  std::vector<bool> r;
  for (const LayerSpec& s : layers) r.push_back(s.mixer == Mixer::ssm);
  return r;
}

std::vector<bool> DecoderHParams::moe() const {
  std::vector<bool> r;
  for (const LayerSpec& s : layers) r.push_back(s.ffn == FfnKind::moe);
  return r;
}

DecoderHParams read_decoder_hparams(const gguf::File& f) {
  const MetadataReader md(f);
  DecoderHParams h;
  h.arch = f.require_string("general.architecture");
  const ArchSpec* spec = find_arch(h.arch);
  if (!spec)
    throw md.fail("general.architecture '" + h.arch +
                  "' is not supported (supported: " + supported_archs() + ")");
  read_common(md, h);
  spec->read_hparams(md, h);
  return h;
}

}  // namespace sy::model
