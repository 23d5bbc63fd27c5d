#include "model/hparams.h"

#include <cmath>
#include <stdexcept>

#include "gguf/gguf.h"
#include "model/metadata_reader.h"

namespace sy::model {

LlamaHParams read_llama_hparams(const gguf::File& f) {
  LlamaHParams h;
  const MetadataReader md(f);
  auto fail = [&](const std::string& what) { return md.fail(what); };
  h.arch = f.require_string("general.architecture");
  if (h.arch != "llama")
    throw fail("general.architecture is '" + h.arch + "'; this engine runs 'llama' models");
  const std::string p = h.arch + ".";
  auto u32 = [&](const std::string& key, std::optional<uint32_t> def) { return md.u32(key, def); };
  h.n_ctx = u32(p + "context_length", std::nullopt);
  h.n_embd = u32(p + "embedding_length", std::nullopt);
  h.n_layer = u32(p + "block_count", std::nullopt);
  h.n_ff = u32(p + "feed_forward_length", 0u);
  h.n_head = u32(p + "attention.head_count", 0u);
  h.n_head_kv = u32(p + "attention.head_count_kv", h.n_head);
  if (h.n_layer == 0 || h.n_layer > 512) throw fail(p + "block_count must be in [1, 512]");
  if (h.n_head == 0 || h.n_embd % h.n_head != 0)
    throw fail(p + "attention.head_count must divide " + p + "embedding_length");
  if (h.n_head_kv == 0 || h.n_head % h.n_head_kv != 0)
    throw fail(p + "attention.head_count_kv must divide " + p + "attention.head_count");
  h.head_dim = u32(p + "attention.key_length", h.n_embd / h.n_head);
  if (u32(p + "attention.value_length", h.head_dim) != h.head_dim)
    throw fail(p + "attention.value_length differs from key_length (unsupported)");
  h.n_rot = u32(p + "rope.dimension_count", h.head_dim);
  if (h.n_rot != h.head_dim)
    throw fail("invalid n_rot: " + p + "rope.dimension_count must equal head dim");
  if (auto v = f.get_float(p + "rope.freq_base")) h.rope_freq_base = static_cast<float>(*v);
  if (auto v = f.get_float(p + "rope.scaling.factor"); v && *v > 0)
    h.rope_freq_scale = static_cast<float>(1.0 / *v);
  auto eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
  if (!eps) throw fail("missing key " + p + "attention.layer_norm_rms_epsilon");
  h.rms_eps = static_cast<float>(*eps);
  if (auto v = f.get_float(p + "attention.scale")) h.attn_scale = static_cast<float>(*v);
  h.n_expert = u32(p + "expert_count", 0u);
  h.n_expert_used = u32(p + "expert_used_count", 0u);
  if (h.n_expert > 0 && (h.n_expert_used == 0 || h.n_expert_used > h.n_expert))
    throw fail(p + "expert_used_count must be in [1, " + p + "expert_count]");

  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw fail("missing tensor token_embd.weight");
  h.n_vocab = static_cast<uint32_t>(embd->ne[1]);
  if (auto v = f.get_uint(p + "vocab_size"); v && *v != h.n_vocab)
    throw fail(p + "vocab_size disagrees with token_embd.weight");
  h.tied_output = f.find_tensor("output.weight") == nullptr;
  return h;
}

}  // namespace sy::model
