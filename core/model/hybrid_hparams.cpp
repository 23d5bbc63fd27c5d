#include "model/hybrid_hparams.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "model/metadata_reader.h"

namespace sy::model {

uint32_t HybridHParams::n_attn_layers() const {
  uint32_t n = 0;
  for (bool r : recurrent) n += !r;
  return n;
}

HybridHParams read_hybrid_hparams(const gguf::File& f) {
  HybridHParams h;
  const MetadataReader md(f);
  auto fail = [&](const std::string& what) { return md.fail(what); };
  h.arch = f.require_string("general.architecture");
  if (h.arch != "mamba" && h.arch != "jamba")
    throw fail("general.architecture is '" + h.arch + "', expected mamba or jamba");
  const std::string p = h.arch + ".";
  auto u32 = [&](const std::string& key, std::optional<uint32_t> def) { return md.u32(key, def); };
  h.n_ctx = u32(p + "context_length", std::nullopt);
  h.n_embd = u32(p + "embedding_length", std::nullopt);
  h.n_layer = u32(p + "block_count", std::nullopt);
  if (h.n_layer == 0 || h.n_layer > 512) throw fail(p + "block_count must be in [1, 512]");
  // A scalar, or an array with one entry per layer (llama.cpp's get_key_or_arr).
  auto per_layer = [&](const std::string& key, uint32_t def) {
    std::vector<uint32_t> out(h.n_layer, def);
    const gguf::Value* v = f.find(key);
    if (!v) return out;
    if (v->type != gguf::ValueType::ARRAY) {
      out.assign(h.n_layer, u32(key, def));
      return out;
    }
    if (v->array.size() != h.n_layer)
      throw fail("key " + key + " has wrong array length; expected " + std::to_string(h.n_layer) +
                 ", got " + std::to_string(v->array.size()));
    for (uint32_t l = 0; l < h.n_layer; ++l) {
      const gguf::Value& e = v->array[l];
      const bool sgn = e.type == gguf::ValueType::INT8 || e.type == gguf::ValueType::INT16 ||
                       e.type == gguf::ValueType::INT32 || e.type == gguf::ValueType::INT64;
      if (sgn ? (e.i < 0 || e.i > INT32_MAX) : e.u > UINT32_MAX)
        throw fail("key " + key + "[" + std::to_string(l) + "] is out of range");
      out[l] = static_cast<uint32_t>(sgn ? e.i : e.u);
    }
    return out;
  };
  const auto ff = per_layer(p + "feed_forward_length", 0);
  const auto heads = per_layer(p + "attention.head_count", 0);
  const auto kv = per_layer(p + "attention.head_count_kv", h.arch == "mamba" ? 0 : ~0u);
  h.d_conv = u32(p + "ssm.conv_kernel", std::nullopt);
  h.d_inner = u32(p + "ssm.inner_size", std::nullopt);
  h.d_state = u32(p + "ssm.state_size", std::nullopt);
  h.dt_rank = u32(p + "ssm.time_step_rank", std::nullopt);
  if (h.d_inner != 2 * h.n_embd)
    throw fail(p + "ssm.inner_size must be 2 * embedding_length (llama.cpp supports only that)");
  if (h.d_conv == 0 || h.d_state == 0 || h.dt_rank == 0)
    throw fail(p + "ssm.conv_kernel, state_size and time_step_rank must be positive");
  auto eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
  if (!eps) throw fail("missing key " + p + "attention.layer_norm_rms_epsilon");
  h.rms_eps = static_cast<float>(*eps);
  h.n_expert = u32(p + "expert_count", 0u);
  h.n_expert_used = u32(p + "expert_used_count", 0u);
  if (h.n_expert > 0 && (h.n_expert_used == 0 || h.n_expert_used > h.n_expert))
    throw fail(p + "expert_used_count must be in [1, " + p + "expert_count]");

  h.has_ffn = h.arch == "jamba";
  for (uint32_t l = 0; l < h.n_layer; ++l) {
    // mamba: every layer recurrent; jamba: head_count_kv 0 marks a recurrent layer.
    const bool recr = h.arch == "mamba" || kv[l] == 0;
    if (kv[l] == ~0u) throw fail("missing key " + p + "attention.head_count_kv");
    h.recurrent.push_back(recr);
    h.moe.push_back(h.has_ffn &&
                    f.find_tensor("blk." + std::to_string(l) + ".ffn_gate_inp.weight") != nullptr);
    if (h.moe.back() && h.n_expert == 0)
      throw fail(p + "expert_count is 0 but layer " + std::to_string(l) + " has ffn_gate_inp");
    if (h.has_ffn) {
      if (l > 0 && ff[l] != h.n_ff)
        throw fail(p + "feed_forward_length differs between layers (unsupported)");
      h.n_ff = ff[l];
    }
    if (recr) continue;
    if (heads[l] == 0 || h.n_embd % heads[l] || heads[l] % kv[l])
      throw fail("layer " + std::to_string(l) +
                 ": head_count must divide embedding_length and "
                 "head_count_kv must divide head_count");
    if (h.n_head && (heads[l] != h.n_head || kv[l] != h.n_head_kv))
      throw fail("attention layers with different head counts are not supported");
    h.n_head = heads[l];
    h.n_head_kv = kv[l];
    h.head_dim = h.n_embd / h.n_head;
  }
  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw fail("missing tensor token_embd.weight");
  h.n_vocab = static_cast<uint32_t>(embd->ne[1]);
  if (auto v = f.get_uint(p + "vocab_size"); v && *v != h.n_vocab)
    throw fail(p + "vocab_size disagrees with token_embd.weight");
  h.tied_output = f.find_tensor("output.weight") == nullptr;
  h.dt_b_c_norms = h.arch == "jamba" || f.get_bool(p + "ssm.dt_b_c_rms").value_or(false);
  return h;
}

}  // namespace sy::model
