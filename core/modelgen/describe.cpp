// What a ModelShape stands for: the ModelDesc the loader reads back from the file the writer
// writes for it, and the shape checks that come before any writing.
#include <stdexcept>

#include "modelgen/generator_detail.h"
#include "switchyard/common/dtype.h"

namespace sy::model::detail {
namespace {

[[noreturn]] void bad(const std::string& why) {
  throw std::invalid_argument(why);
}

void check_heads(const ModelShape& s) {
  if (s.n_head == 0 || s.n_embd % s.n_head || s.n_head_kv == 0 || s.n_head % s.n_head_kv)
    bad("n_head must divide n_embd and n_head_kv must divide n_head");
}

void check_experts(const ModelShape& s) {
  if (s.n_expert > 0 && (s.n_expert_used == 0 || s.n_expert_used > s.n_expert))
    bad("n_expert_used must be in [1, n_expert]");
}

void attention_sizes(const ModelShape& s, ModelDesc& d) {
  d.n_head = s.n_head;
  d.n_head_kv = s.n_head_kv;
  d.head_dim = s.n_head ? s.n_embd / s.n_head : 0;
  d.attn_scale = d.head_dim ? 1.0f / std::sqrt(float(d.head_dim)) : 0.0f;
}

}  // namespace

ModelDesc describe(const ModelShape& s) {
  ModelDesc d;
  d.arch = s.arch;
  d.n_vocab = s.n_vocab;
  d.n_ctx = s.n_ctx;
  d.n_embd = s.n_embd;
  d.n_layer = s.n_layer;
  d.rms_eps = s.rms_eps;
  d.tied_output = s.tied_output;
  d.n_ff = s.n_ff;
  d.n_expert = s.n_expert;
  d.n_expert_used = s.n_expert_used;
  d.n_ff_exp = s.n_ff;
  if (s.arch == "llama") {
    check_heads(s);
    if (s.n_vocab < 259) bad("n_vocab must be at least 259 (3 specials + 256 bytes)");
    check_experts(s);
    attention_sizes(s, d);
    d.rope.enabled = true;
    d.rope.n_rot = d.head_dim;
    d.rope.freq_base = s.rope_freq_base;
    d.rope.n_ctx_orig = s.n_ctx;
    d.moe_normalize = true;
    d.layers.assign(s.n_layer, {Mixer::attention, s.n_expert ? FfnKind::moe : FfnKind::dense});
    return d;
  }
  if (s.arch != "mamba" && s.arch != "jamba")
    bad("arch '" + s.arch + "' is not one of llama, mamba, jamba");
  if (s.n_vocab < 259) bad("n_vocab must be at least 259 (3 specials + 256 bytes)");
  if (s.n_layer == 0) bad("n_layer must be at least 1");
  if (s.ssm_d_conv < 1 || s.ssm_d_state < 1) bad("ssm_d_conv and ssm_d_state must be positive");
  d.d_conv = s.ssm_d_conv;
  d.d_inner = s.d_inner();
  d.d_state = s.ssm_d_state;
  d.dt_rank = s.dt_rank();
  if (s.arch == "mamba") {
    d.n_ff = 0;
    d.layers.assign(s.n_layer, {Mixer::ssm, FfnKind::none});
    return d;
  }
  check_heads(s);
  check_experts(s);
  attention_sizes(s, d);
  d.dt_b_c_norms = true;
  for (uint32_t l = 0; l < s.n_layer; ++l)
    d.layers.push_back({s.is_attention_layer(l) ? Mixer::attention : Mixer::ssm,
                        s.is_moe_layer(l) ? FfnKind::moe : FfnKind::dense});
  return d;
}

void check_blocks(const ModelShape& s, const dtype::FileType& ft, const std::string& dtype) {
  if (s.arch == "llama") {
    const std::pair<const char*, uint32_t> dims[] = {{"n_embd", s.n_embd}, {"n_ff", s.n_ff}};
    check_whole_blocks(ft, dtype, dims, 2);
    return;
  }
  // Every quantised matrix's rows must be whole blocks.
  const std::pair<const char*, uint32_t> dims[] = {{"n_embd", s.n_embd},
                                                   {"d_inner (2 * n_embd)", s.d_inner()},
                                                   {"ssm_dt_rank", s.dt_rank()},
                                                   {"n_ff", s.arch == "jamba" ? s.n_ff : 32u}};
  check_whole_blocks(ft, dtype, dims, 4);
}

}  // namespace sy::model::detail
