// The layer patterns of the hybrid shapes (jamba's attention and expert periods) and the hybrid
// presets.
#include <algorithm>
#include <stdexcept>

#include "modelgen/generator_detail.h"

namespace sy::model {

namespace {

bool one_of(const std::string& a, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (a == n) return true;
  return false;
}
bool on_period(uint32_t l, uint32_t offset, uint32_t period) {
  return l >= offset && (l - offset) % std::max(1u, period) == 0;
}

}  // namespace

uint32_t ModelShape::d_inner() const {
  if (ssm_d_inner) return ssm_d_inner;
  if (one_of(arch, {"qwen35", "qwen35moe", "qwen3next"})) return ssm_dt_rank * ssm_d_state;
  if (one_of(arch, {"lfm2", "lfm2moe"})) return n_embd;
  return 2 * n_embd;
}

bool ModelShape::is_attention_layer(uint32_t l) const {
  if (one_of(arch, {"mamba", "mamba2"})) return false;
  if (one_of(arch, {"nemotron_h", "nemotron_h_moe"}))
    return !layer_pattern.empty() && layer_pattern[l % layer_pattern.size()] == '*';
  if (one_of(arch,
             {"jamba", "granitehybrid", "lfm2", "lfm2moe", "qwen35", "qwen35moe", "qwen3next"}))
    return on_period(l, attn_layer_offset, attn_layer_period);
  return true;  // llama, qwen3, qwen3moe; falcon-h1's layers all have attention (and Mamba-2)
}

bool ModelShape::is_moe_layer(uint32_t l) const {
  if (n_expert == 0 || one_of(arch, {"mamba", "mamba2"})) return false;
  if (one_of(arch, {"jamba", "lfm2moe"}))
    return on_period(l, expert_layer_offset, expert_layer_period);
  if (one_of(arch, {"nemotron_h", "nemotron_h_moe"}))
    return !layer_pattern.empty() && layer_pattern[l % layer_pattern.size()] == 'E';
  return true;
}

namespace detail {

bool hybrid_preset(const std::string& name, ModelShape& s) {
  auto jamba = [&](uint32_t V, uint32_t ctx, uint32_t E, uint32_t L, uint32_t F) {
    s.arch = "jamba";
    s.n_vocab = V, s.n_ctx = ctx, s.n_embd = E, s.n_layer = L, s.n_ff = F;
    s.ssm_dt_rank = 32;  // a whole Q8_0 block (the default would be n_embd / 16)
    s.n_expert = 4, s.n_expert_used = 2;
  };
  if (name == "hybrid-tiny") {
    // M+MoE, A+dense, M+dense, A+MoE: every layer kind once.
    jamba(259, 512, 64, 4, 96);
    s.n_head = 4, s.n_head_kv = 2;
    s.attn_layer_offset = 1, s.attn_layer_period = 2;
    s.expert_layer_offset = 0, s.expert_layer_period = 3;
    return true;
  }
  if (name == "mamba-tiny") {
    s.arch = "mamba";
    s.n_embd = 64, s.n_layer = 3, s.n_ff = 0, s.n_head = 0, s.n_head_kv = 0;
    return true;  // dt_rank: the default ceil(64 / 16) = 4
  }
  if (name == "moe-tiny") {
    s.n_layer = 2, s.n_ff = 64, s.n_expert = 4, s.n_expert_used = 2;
    return true;
  }
  if (name == "hybrid-small" || name == "hybrid-small-active") {
    // dense-small's width; Jamba's block with one attention layer in four and MoE (4 experts,
    // top 2) every second layer. n_ff 192: total parameters within 3% of dense-small; 320:
    // active parameters within 3% of it.
    jamba(512, 2048, 256, 4, name == "hybrid-small" ? 192 : 320);
    s.n_head = 8, s.n_head_kv = 4;
    s.attn_layer_offset = 2, s.attn_layer_period = 4;
    return true;
  }
  if (name == "dense-20m" || name == "hybrid-20m") {
    // bench-hybrid's pair: equal total parameters (within 2%), small enough that an 8k-token
    // prefill runs in seconds on two cores. Hybrid: attention in layers 3 and 7 (1:3).
    if (name == "dense-20m") {
      s.n_vocab = 4096, s.n_ctx = 16384, s.n_embd = 512, s.n_layer = 8, s.n_ff = 1024;
    } else {
      jamba(4096, 16384, 512, 8, 224);
      s.attn_layer_offset = 3, s.attn_layer_period = 4;
    }
    s.n_head = 8, s.n_head_kv = 4, s.tied_output = true;
    return true;
  }
  return false;
}

std::vector<std::string> hybrid_preset_names() {
  return {"hybrid-tiny",         "mamba-tiny", "moe-tiny",  "hybrid-small",
          "hybrid-small-active", "dense-20m",  "hybrid-20m"};
}

}  // namespace detail
}  // namespace sy::model
