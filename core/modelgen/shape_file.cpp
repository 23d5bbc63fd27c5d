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
  if (s.arch != "llama" && s.arch != "mamba" && s.arch != "jamba") {
    const toml::node* n = root.get("arch");
    throw ConfigError(where(origin, n ? n->source() : root.source()) +
                      ": arch: must be one of llama, mamba, jamba, got \"" + s.arch + "\"");
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
  top.reject_unknown();
  return s;
}

}  // namespace sy
