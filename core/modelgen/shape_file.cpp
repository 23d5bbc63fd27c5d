#include "modelgen/shape_file.h"

#include "config/toml_reader.h"

namespace sy {

model::ModelShape load_shape(const std::filesystem::path& path, const std::string& base_preset) {
  const std::string origin = path.string();
  const toml::table root = parse_toml(read_text_file(path), origin);
  TableReader top(origin, root, "");
  std::string preset = base_preset;
  top.read_string("preset", preset);
  model::ModelShape s = preset.empty() ? model::ModelShape{} : model::preset_shape(preset);
  top.read_string("arch", s.arch);
  if (!model::is_generated_arch(s.arch)) {
    const toml::node* n = root.get("arch");
    throw ConfigError(where(origin, n ? n->source() : root.source()) + ": arch: must be one of " +
                      model::generated_archs() + ", got \"" + s.arch + "\"");
  }
  top.read_int("n_vocab", s.n_vocab, 259, 1 << 22);
  top.read_int("n_ctx", s.n_ctx, 1, 1 << 24);
  top.read_int("n_embd", s.n_embd, 1, 1 << 16);
  top.read_int("n_layer", s.n_layer, 1, 512);
  top.read_int("n_ff", s.n_ff, 1, 1 << 20);
  top.read_int("n_head", s.n_head, 1, 1024);
  top.read_int("n_head_kv", s.n_head_kv, 1, 1024);
  top.read_float("rope_freq_base", s.rope_freq_base, 1.0, 1e9);
  top.read_float("rms_eps", s.rms_eps, 0.0, 1.0);
  top.read_bool("tied_output", s.tied_output);
  // MoE (llama: every layer; jamba: the expert layer pattern) and the SSM / jamba layer pattern.
  top.read_int("n_expert", s.n_expert, 0, 1024);
  top.read_int("n_expert_used", s.n_expert_used, 0, 1024);
  top.read_int("ssm_d_conv", s.ssm_d_conv, 1, 64);
  top.read_int("ssm_d_state", s.ssm_d_state, 1, 1024);
  top.read_int("ssm_dt_rank", s.ssm_dt_rank, 0, 1 << 16);
  top.read_int("attn_layer_offset", s.attn_layer_offset, 0, 511);
  top.read_int("attn_layer_period", s.attn_layer_period, 1, 512);
  top.read_int("expert_layer_offset", s.expert_layer_offset, 0, 511);
  top.read_int("expert_layer_period", s.expert_layer_period, 1, 512);
  // The 2026 families' fields (modelgen/generator.h).
  top.read_int("head_dim", s.head_dim, 0, 4096);
  top.read_int("n_rot", s.n_rot, 0, 4096);
  top.read_int("window", s.window, 0, 1 << 24);
  top.read_int("window_period", s.window_period, 0, 512);
  top.read_float("rope_freq_base_swa", s.rope_freq_base_swa, 0.0, 1e12);
  top.read_float("logit_softcap", s.logit_softcap, 0.0, 1e6);
  top.read_float("attn_softcap", s.attn_softcap, 0.0, 1e6);
  top.read_int("head_dim_swa", s.head_dim_swa, 0, 4096);
  top.read_int("n_head_kv_global", s.n_head_kv_global, 0, 4096);
  top.read_int("n_embd_per_layer", s.n_embd_per_layer, 0, 1 << 16);
  top.read_int("kv_shared_layers", s.kv_shared_layers, 0, 512);
  top.read_bool("rope", s.rope);
  top.read_float("embedding_scale", s.embedding_scale, 0.0, 1e6);
  top.read_float("residual_scale", s.residual_scale, 0.0, 1e6);
  top.read_float("logit_scale", s.logit_scale, 0.0, 1e6);
  top.read_float("attention_scale", s.attention_scale, 0.0, 1e6);
  top.read_float("attn_temp_scale", s.attn_temp_scale, 0.0, 1e6);
  top.read_int("attn_temp_floor", s.attn_temp_floor, 0, 1 << 24);
  top.read_int("ssm_d_inner", s.ssm_d_inner, 0, 1 << 20);
  top.read_int("ssm_n_group", s.ssm_n_group, 1, 1024);
  top.read_int("n_ff_exp", s.n_ff_exp, 0, 1 << 20);
  top.read_int("n_ff_shexp", s.n_ff_shexp, 0, 1 << 20);
  top.read_int("moe_latent", s.moe_latent, 0, 1 << 20);
  top.read_bool("moe_sigmoid", s.moe_sigmoid);
  top.read_float("expert_weights_scale", s.expert_weights_scale, 0.0, 1e6);
  top.read_string("layer_pattern", s.layer_pattern);
  top.reject_unknown();
  return s;
}

}  // namespace sy
