// What a ModelShape stands for: the ModelDesc the loader reads back from the file the writer
// writes for it, and the shape checks that come before any writing.
#include <stdexcept>

#include "modelgen/generator_detail.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"

namespace sy::model::detail {
namespace {

[[noreturn]] void bad(const std::string& why) {
  throw sy::Error(why);
}

void check_heads(const ModelShape& s) {
  if (s.n_head == 0 || (!s.head_dim && s.n_embd % s.n_head) || s.n_head_kv == 0 ||
      s.n_head % s.n_head_kv)
    bad("n_head must divide n_embd and n_head_kv must divide n_head");
}

void check_experts(const ModelShape& s) {
  if (s.n_expert > 0 && (s.n_expert_used == 0 || s.n_expert_used > s.n_expert))
    bad("n_expert_used must be in [1, n_expert]");
}

void attention_sizes(const ModelShape& s, ModelDesc& d, bool rope, bool neox) {
  d.n_head = s.n_head;
  d.n_head_kv = s.n_head_kv;
  d.head_dim = s.attn_head_dim();
  d.attn_scale = d.head_dim ? 1.0f / std::sqrt(float(d.head_dim)) : 0.0f;
  if (s.attention_scale != 0.0f) d.attn_scale = s.attention_scale;
  if (!rope) return;
  d.rope.enabled = true;
  d.rope.neox = neox;
  d.rope.n_rot = s.n_rot ? s.n_rot : d.head_dim;
  d.rope.freq_base = s.rope_freq_base;
  d.rope.n_ctx_orig = s.n_ctx;
  if (d.rope.n_rot % 2 || d.rope.n_rot > d.head_dim) bad("n_rot must be even and at most head_dim");
}

void recurrent_sizes(const ModelShape& s, ModelDesc& d) {
  if (s.ssm_d_conv < 1 || s.ssm_d_state < 1) bad("ssm_d_conv and ssm_d_state must be positive");
  d.d_conv = s.ssm_d_conv;
  d.d_inner = s.d_inner();
  d.d_state = s.ssm_d_state;
  d.dt_rank = s.dt_rank();
}

// Mamba-2's heads (ssm_dt_rank) and groups.
void mamba2_sizes(const ModelShape& s, ModelDesc& d) {
  recurrent_sizes(s, d);
  d.n_group = s.ssm_n_group;
  if (!s.ssm_dt_rank || !d.n_group || d.d_inner % d.dt_rank || d.d_inner % d.n_group ||
      d.dt_rank % d.n_group)
    bad("ssm_dt_rank (the Mamba-2 heads) and ssm_n_group must divide ssm_d_inner, the groups the "
        "heads");
}

void moe_sizes(const ModelShape& s, ModelDesc& d) {
  check_experts(s);
  if (!s.n_expert) return;
  d.n_ff_exp = s.n_ff_exp ? s.n_ff_exp : s.n_ff;
  d.n_ff_shexp = s.n_ff_shexp;
  d.moe_normalize = true;
}

bool one_of(const std::string& a, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (a == n) return true;
  return false;
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
  d.n_ff_exp = s.n_expert ? s.n_ff : 0;
  if (s.arch == "llama") {
    check_heads(s);
    if (s.n_vocab < 259) bad("n_vocab must be at least 259 (3 specials + 256 bytes)");
    check_experts(s);
    attention_sizes(s, d, true, false);
    d.moe_normalize = true;
    d.layers.assign(s.n_layer, {Mixer::attention, s.n_expert ? FfnKind::moe : FfnKind::dense});
    return d;
  }
  if (!is_generated_arch(s.arch)) bad("arch '" + s.arch + "' is not one of " + generated_archs());
  if (s.n_vocab < 259) bad("n_vocab must be at least 259 (3 specials + 256 bytes)");
  if (s.n_layer == 0) bad("n_layer must be at least 1");
  auto layers = [&](Mixer attn, Mixer other, FfnKind moe, FfnKind dense) {
    for (uint32_t l = 0; l < s.n_layer; ++l)
      d.layers.push_back({s.is_attention_layer(l) ? attn : other, s.is_moe_layer(l) ? moe : dense});
  };
  if (s.arch == "mamba" || s.arch == "jamba") {
    recurrent_sizes(s, d);
    if (s.arch == "mamba") {
      d.n_ff = 0;
      d.layers.assign(s.n_layer, {Mixer::ssm, FfnKind::none});
      return d;
    }
    check_heads(s);
    check_experts(s);
    attention_sizes(s, d, false, false);
    d.dt_b_c_norms = true;
    layers(Mixer::attention, Mixer::ssm, FfnKind::moe, FfnKind::dense);
    return d;
  }
  if (s.arch == "mamba2") {
    mamba2_sizes(s, d);
    d.n_ff = 0;
    d.layers.assign(s.n_layer, {Mixer::ssm2, FfnKind::none});
    return d;
  }
  check_heads(s);
  if (s.arch == "granitehybrid") {
    mamba2_sizes(s, d);
    attention_sizes(s, d, s.rope, false);
    moe_sizes(s, d);
    d.n_ff_exp = s.n_expert ? s.n_ff : 0;  // Granite's experts are feed_forward_length wide
    d.embedding_scale = s.embedding_scale;
    d.residual_scale = s.residual_scale;
    d.logit_scale = s.logit_scale;
    layers(Mixer::attention, Mixer::ssm2, FfnKind::moe, FfnKind::dense);
    return d;
  }
  if (s.arch == "nemotron_h" || s.arch == "nemotron_h_moe") {
    mamba2_sizes(s, d);
    attention_sizes(s, d, false, false);
    moe_sizes(s, d);
    d.ffn_act = FfnAct::relu_sqr;
    d.moe_gating = MoeGating::sigmoid;
    d.moe_latent = s.moe_latent;
    if (s.expert_weights_scale != 0.0f) d.moe_weights_scale = s.expert_weights_scale;
    if (s.layer_pattern.find_first_not_of("M*-E") != std::string::npos || s.layer_pattern.empty())
      bad("layer_pattern must be Nemotron's hybrid_override_pattern: M, *, - and E");
    if (s.n_expert > 0 && !s.n_ff_shexp) bad("nemotron MoE layers need n_ff_shexp");
    for (uint32_t l = 0; l < s.n_layer; ++l) {
      const char c = s.layer_pattern[l % s.layer_pattern.size()];
      if (c == 'E' && !s.n_expert) bad("layer_pattern has E but n_expert is 0");
      if (c == '-' && s.n_expert)
        bad("layer_pattern has - but n_expert > 0: every FFN is MoE then");
      d.layers.push_back(c == 'M'   ? LayerSpec{Mixer::ssm2, FfnKind::none}
                         : c == '*' ? LayerSpec{Mixer::attention, FfnKind::none}
                         : c == '-' ? LayerSpec{Mixer::none, FfnKind::dense}
                                    : LayerSpec{Mixer::none, FfnKind::moe});
    }
    return d;
  }
  if (s.arch == "falcon-h1") {
    mamba2_sizes(s, d);
    attention_sizes(s, d, true, true);
    d.layers.assign(s.n_layer, {Mixer::parallel, FfnKind::dense});
    return d;
  }
  if (s.arch == "lfm2" || s.arch == "lfm2moe") {
    if (s.ssm_d_conv < 2) bad("ssm_d_conv (lfm2's l_cache) must be at least 2");
    d.d_conv = s.ssm_d_conv;
    d.d_inner = s.n_embd;
    attention_sizes(s, d, true, true);
    if (d.q_width() != s.n_embd) bad("lfm2 needs n_head * head_dim = n_embd");
    d.rope_swa = d.rope;
    if (s.arch == "lfm2") {
      d.window = s.window;
    } else {
      moe_sizes(s, d);
      d.moe_gating = s.moe_sigmoid ? MoeGating::sigmoid : MoeGating::softmax;
    }
    layers(Mixer::attention, Mixer::shortconv, FfnKind::moe, FfnKind::dense);
    for (LayerSpec& l : d.layers) l.swa = d.window && l.mixer == Mixer::attention;
    return d;
  }
  if (one_of(s.arch, {"qwen35", "qwen35moe", "qwen3next"})) {
    recurrent_sizes(s, d);
    d.n_group = s.ssm_n_group;
    if (!s.ssm_dt_rank || !d.n_group || d.dt_rank % d.n_group || d.d_inner != d.dt_rank * d.d_state)
      bad("ssm_dt_rank (value heads) must be a multiple of ssm_n_group (key heads), and "
          "ssm_d_inner value heads * ssm_d_state");
    if (s.attn_layer_offset + 1 != s.attn_layer_period)
      bad("attention layers must be every attn_layer_period-th (attn_layer_offset = period - 1)");
    attention_sizes(s, d, true, true);
    if (s.arch != "qwen35") {
      moe_sizes(s, d);
      if (!s.n_expert) bad(s.arch + " needs n_expert");
      d.n_ff_shexp = s.n_ff_shexp ? s.n_ff_shexp : s.n_ff;
    }
    layers(Mixer::attention, Mixer::gdn, FfnKind::moe, FfnKind::dense);
    return d;
  }
  if (one_of(s.arch, {"qwen2", "qwen2moe", "phi3"})) {
    attention_sizes(s, d, true, true);
    if (d.q_width() != s.n_embd) bad(s.arch + " needs n_head * head_dim = n_embd");
    if (s.arch == "phi3") {
      if (s.n_expert) bad("phi3 has no experts");
    } else if (s.arch == "qwen2moe") {
      moe_sizes(s, d);
      if (!s.n_expert) bad("qwen2moe needs n_expert");
      if (s.tied_output) bad("qwen2moe needs its own output matrix");
      d.n_ff_shexp = s.n_ff_shexp ? s.n_ff_shexp : s.n_ff;
      d.moe_normalize = false;
    }
    layers(Mixer::attention, Mixer::attention, FfnKind::moe, FfnKind::dense);
    return d;
  }
  if (one_of(s.arch, {"mistral3", "granite", "granitemoe"})) {
    attention_sizes(s, d, s.rope, false);
    moe_sizes(s, d);
    if (s.n_ff_exp && s.n_ff_exp != s.n_ff) bad(s.arch + "'s experts are n_ff wide");
    d.n_ff_exp = s.n_expert ? s.n_ff : 0;
    if (s.arch == "granitemoe" && !s.n_expert) bad("granitemoe needs n_expert");
    if (s.arch == "mistral3") {
      if (!s.rope) bad("mistral3 always rotates");
      if (s.n_ff_shexp) bad("mistral3 has no shared expert");
      d.attn_temp_scale = s.attn_temp_scale;
      if (s.attn_temp_scale != 0.0f) {
        if (!s.attn_temp_floor) bad("attn_temp_scale needs attn_temp_floor");
        d.attn_temp_floor = s.attn_temp_floor;
        d.rope.n_ctx_orig = s.attn_temp_floor;  // both are rope.scaling.original_context_length
      }
    } else {
      if (!s.logit_scale) bad("granite needs logit_scale");
      d.embedding_scale = s.embedding_scale;
      d.residual_scale = s.residual_scale;
      d.logit_scale = s.logit_scale;
    }
    layers(Mixer::attention, Mixer::attention, FfnKind::moe, FfnKind::dense);
    return d;
  }
  if (s.arch == "gpt-oss") {
    attention_sizes(s, d, true, true);
    moe_sizes(s, d);
    if (!s.n_expert) bad("gpt-oss needs n_expert");
    if (s.n_ff_shexp) bad("gpt-oss has no shared expert");
    if (s.tied_output) bad("gpt-oss has its own output matrix");
    if (s.n_rot && s.n_rot != d.head_dim) bad("gpt-oss rotates whole heads");
    if (!s.window) bad("gpt-oss needs a window");
    d.n_ff = d.n_ff_exp;
    d.ffn_act = FfnAct::swiglu_oai;
    layers(Mixer::attention, Mixer::attention, FfnKind::moe, FfnKind::moe);
    d.window = s.window;
    d.rope_swa = d.rope;
    d.set_swa_period(2);
    return d;
  }
  if (s.arch == "gemma4") {
    attention_sizes(s, d, true, true);
    moe_sizes(s, d);  // 26B-A4B: every layer has the dense FFN and the experts
    if (s.n_ff_shexp) bad("gemma4's dense FFN is its shared expert: give n_ff, not n_ff_shexp");
    if (s.n_rot && s.n_rot != d.head_dim) bad("gemma4 rotates whole heads");
    if (!s.window) bad("gemma4 needs a window");
    d.head_dim_swa = s.head_dim_swa ? s.head_dim_swa : d.head_dim;
    if (d.head_dim % 8 || d.head_dim_swa % 2) bad("gemma4 needs head_dim a multiple of 8");
    d.ffn_act = FfnAct::geglu;
    d.embedding_scale = std::sqrt(float(s.n_embd));
    d.attn_scale = 1.0f;
    d.v_norm = true;
    d.logit_softcap = s.logit_softcap;
    layers(Mixer::attention, Mixer::attention, FfnKind::moe, FfnKind::dense);
    d.window = s.window;
    d.set_swa_period(s.window_period ? s.window_period : 6);
    const uint32_t kv_global = s.n_head_kv_global ? s.n_head_kv_global : s.n_head_kv;
    if (s.n_head % kv_global) bad("n_head_kv_global must divide n_head");
    for (const LayerSpec& l : d.layers) d.kv_heads.push_back(l.swa ? s.n_head_kv : kv_global);
    d.rope_swa = d.rope;
    d.rope_swa.n_rot = d.head_dim_swa;
    d.rope_swa.freq_base = s.rope_freq_base_swa != 0.0f ? s.rope_freq_base_swa : 10000.0f;
    d.rope_swa.factors = false;
    d.n_embd_per_layer = s.n_embd_per_layer;
    if (!d.share_kv(s.kv_shared_layers))
      bad("gemma4's kv_shared_layers must leave a global layer last and a local one before it");
    return d;
  }
  if (s.arch == "gemma2" || s.arch == "gemma3") {
    attention_sizes(s, d, true, true);
    if (s.n_expert) bad(s.arch + " has no experts");
    if (s.n_rot && s.n_rot != d.head_dim) bad(s.arch + " rotates whole heads");
    d.ffn_act = FfnAct::geglu;
    d.embedding_scale = std::sqrt(float(s.n_embd));
    d.attn_scale = 1.0f / std::sqrt(float(d.head_dim));
    layers(Mixer::attention, Mixer::attention, FfnKind::moe, FfnKind::dense);
    d.rope_swa = d.rope;
    if (s.arch == "gemma2") {  // always capped, every other layer local
      d.attn_softcap = s.attn_softcap != 0.0f ? s.attn_softcap : 50.0f;
      d.logit_softcap = s.logit_softcap != 0.0f ? s.logit_softcap : 30.0f;
      d.window = s.window ? s.window : 4096;
      d.set_swa_period(s.window_period ? s.window_period : 2);
      if (s.rope_freq_base_swa != 0.0f) d.rope_swa.freq_base = s.rope_freq_base_swa;
      return d;
    }
    d.logit_softcap = s.logit_softcap;
    d.window = s.window;
    if (s.window) {
      d.set_swa_period(s.window_period ? s.window_period : 6);
      d.rope_swa.freq_base = s.rope_freq_base_swa != 0.0f ? s.rope_freq_base_swa : 10000.0f;
    }
    return d;
  }
  // qwen3, qwen3moe
  attention_sizes(s, d, true, true);
  if (s.arch == "qwen3moe") {
    moe_sizes(s, d);
    if (!s.n_expert) bad("qwen3moe needs n_expert");
  }
  layers(Mixer::attention, Mixer::attention, FfnKind::moe, FfnKind::dense);
  return d;
}

void check_blocks(const ModelShape& s, const dtype::FileType& ft, const std::string& dtype) {
  if (s.arch == "llama") {
    const std::pair<const char*, uint32_t> dims[] = {{"n_embd", s.n_embd}, {"n_ff", s.n_ff}};
    check_whole_blocks(ft, dtype, dims, 2);
    return;
  }
  if (s.arch == "mamba" || s.arch == "jamba") {
    // Every quantised matrix's rows must be whole blocks.
    const std::pair<const char*, uint32_t> dims[] = {{"n_embd", s.n_embd},
                                                     {"d_inner (2 * n_embd)", s.d_inner()},
                                                     {"ssm_dt_rank", s.dt_rank()},
                                                     {"n_ff", s.arch == "jamba" ? s.n_ff : 32u}};
    check_whole_blocks(ft, dtype, dims, 4);
    return;
  }
  const ModelDesc d = describe(s);
  const std::pair<const char*, uint32_t> dims[] = {
      {"n_embd", s.n_embd},
      {"n_ff", d.n_ff ? d.n_ff : 32u},
      {"n_ff_exp", d.n_expert ? d.n_ff_exp : 32u},
      {"n_ff_shexp", d.n_ff_shexp ? d.n_ff_shexp : 32u},
      {"ssm_d_inner", d.d_inner ? d.d_inner : 32u},
      {"n_head * head_dim", d.n_head ? d.q_width() : 32u},
      {"moe_latent", d.moe_latent ? d.moe_latent : 32u}};
  check_whole_blocks(ft, dtype, dims, std::size(dims));
}

}  // namespace sy::model::detail

namespace sy::model {

bool is_generated_arch(const std::string& arch) {
  const std::string all = ", " + generated_archs() + ",";
  return !arch.empty() && all.find(", " + arch + ",") != std::string::npos;
}

std::string generated_archs() {
  return "llama, mamba, jamba, mamba2, granitehybrid, nemotron_h, nemotron_h_moe, falcon-h1, "
         "lfm2, lfm2moe, qwen35, qwen35moe, qwen3next, qwen3, qwen3moe, qwen2, qwen2moe, mistral3, "
         "granite, granitemoe, phi3, gemma2, gemma3, gpt-oss, gemma4";
}

}  // namespace sy::model
