#include "model/names.h"

#include <array>
#include <stdexcept>

namespace sy::model::names {
namespace {

struct KeyName {
  Key key;
  bool per_arch;  // prefixed with "<arch>."
  const char* name;
};

// llama.cpp's LLM_KV_NAMES, in Key's order (checked below).
constexpr KeyName kKeys[] = {
    {Key::general_architecture, false, "general.architecture"},
    {Key::general_name, false, "general.name"},
    {Key::general_file_type, false, "general.file_type"},
    {Key::general_quantization_version, false, "general.quantization_version"},
    {Key::vocab_size, true, "vocab_size"},
    {Key::context_length, true, "context_length"},
    {Key::embedding_length, true, "embedding_length"},
    {Key::block_count, true, "block_count"},
    {Key::feed_forward_length, true, "feed_forward_length"},
    {Key::expert_feed_forward_length, true, "expert_feed_forward_length"},
    {Key::expert_shared_feed_forward_length, true, "expert_shared_feed_forward_length"},
    {Key::expert_count, true, "expert_count"},
    {Key::expert_used_count, true, "expert_used_count"},
    {Key::expert_shared_count, true, "expert_shared_count"},
    {Key::expert_weights_scale, true, "expert_weights_scale"},
    {Key::expert_weights_norm, true, "expert_weights_norm"},
    {Key::expert_gating_func, true, "expert_gating_func"},
    {Key::expert_group_count, true, "expert_group_count"},
    {Key::expert_group_used_count, true, "expert_group_used_count"},
    {Key::leading_dense_block_count, true, "leading_dense_block_count"},
    {Key::moe_latent_size, true, "moe_latent_size"},
    {Key::logit_scale, true, "logit_scale"},
    {Key::residual_scale, true, "residual_scale"},
    {Key::embedding_scale, true, "embedding_scale"},
    {Key::full_attention_interval, true, "full_attention_interval"},
    {Key::nextn_predict_layers, true, "nextn_predict_layers"},
    {Key::head_count, true, "attention.head_count"},
    {Key::head_count_kv, true, "attention.head_count_kv"},
    {Key::key_length, true, "attention.key_length"},
    {Key::value_length, true, "attention.value_length"},
    {Key::layer_norm_rms_epsilon, true, "attention.layer_norm_rms_epsilon"},
    {Key::causal, true, "attention.causal"},
    {Key::sliding_window, true, "attention.sliding_window"},
    {Key::attention_scale, true, "attention.scale"},
    {Key::attention_temperature_scale, true, "attention.temperature_scale"},
    {Key::rope_dimension_count, true, "rope.dimension_count"},
    {Key::rope_dimension_sections, true, "rope.dimension_sections"},
    {Key::rope_freq_base, true, "rope.freq_base"},
    {Key::rope_scaling_type, true, "rope.scaling.type"},
    {Key::rope_scaling_factor, true, "rope.scaling.factor"},
    {Key::rope_scale_linear, true, "rope.scale_linear"},
    {Key::rope_scaling_attn_factor, true, "rope.scaling.attn_factor"},
    {Key::rope_scaling_original_context_length, true, "rope.scaling.original_context_length"},
    {Key::rope_scaling_finetuned, true, "rope.scaling.finetuned"},
    {Key::rope_scaling_yarn_log_multiplier, true, "rope.scaling.yarn_log_multiplier"},
    {Key::rope_scaling_yarn_beta_fast, true, "rope.scaling.yarn_beta_fast"},
    {Key::rope_scaling_yarn_beta_slow, true, "rope.scaling.yarn_beta_slow"},
    {Key::ssm_conv_kernel, true, "ssm.conv_kernel"},
    {Key::ssm_inner_size, true, "ssm.inner_size"},
    {Key::ssm_state_size, true, "ssm.state_size"},
    {Key::ssm_time_step_rank, true, "ssm.time_step_rank"},
    {Key::ssm_group_count, true, "ssm.group_count"},
    {Key::ssm_dt_b_c_rms, true, "ssm.dt_b_c_rms"},
    {Key::shortconv_l_cache, true, "shortconv.l_cache"},
    {Key::classifier_output_labels, true, "classifier.output_labels"},
    {Key::sliding_window_pattern, true, "attention.sliding_window_pattern"},
    {Key::rope_freq_base_swa, true, "rope.freq_base_swa"},
    {Key::final_logit_softcapping, true, "final_logit_softcapping"},
    {Key::key_length_swa, true, "attention.key_length_swa"},
    {Key::value_length_swa, true, "attention.value_length_swa"},
    {Key::rope_dimension_count_swa, true, "rope.dimension_count_swa"},
    {Key::shared_kv_layers, true, "attention.shared_kv_layers"},
    {Key::embedding_length_per_layer_input, true, "embedding_length_per_layer_input"},
    {Key::attn_logit_softcapping, true, "attn_logit_softcapping"},
};
static_assert(std::size(kKeys) == static_cast<size_t>(Key::count), "a Key without a name");

struct TensorName {
  Tensor tensor;
  const char* name;
};

// llama.cpp's LLM_TENSOR_NAMES (without "blk.%d."), in Tensor's order (checked below).
constexpr TensorName kTensors[] = {
    {Tensor::token_embd, "token_embd"},
    {Tensor::token_embd_norm, "token_embd_norm"},
    {Tensor::output_norm, "output_norm"},
    {Tensor::output, "output"},
    {Tensor::rope_freqs, "rope_freqs"},
    {Tensor::rope_factors_long, "rope_factors_long"},
    {Tensor::rope_factors_short, "rope_factors_short"},
    {Tensor::cls_out, "cls.output"},
    {Tensor::attn_norm, "attn_norm"},
    {Tensor::attn_q_norm, "attn_q_norm"},
    {Tensor::attn_k_norm, "attn_k_norm"},
    {Tensor::post_attention_norm, "post_attention_norm"},
    {Tensor::ffn_norm, "ffn_norm"},
    {Tensor::attn_q, "attn_q"},
    {Tensor::attn_k, "attn_k"},
    {Tensor::attn_v, "attn_v"},
    {Tensor::attn_qkv, "attn_qkv"},
    {Tensor::attn_output, "attn_output"},
    {Tensor::attn_gate, "attn_gate"},
    {Tensor::ffn_gate, "ffn_gate"},
    {Tensor::ffn_up, "ffn_up"},
    {Tensor::ffn_down, "ffn_down"},
    {Tensor::ffn_gate_inp, "ffn_gate_inp"},
    {Tensor::ffn_gate_exps, "ffn_gate_exps"},
    {Tensor::ffn_up_exps, "ffn_up_exps"},
    {Tensor::ffn_down_exps, "ffn_down_exps"},
    {Tensor::ffn_gate_up_exps, "ffn_gate_up_exps"},
    {Tensor::exp_probs_b, "exp_probs_b"},
    {Tensor::ffn_latent_down, "ffn_latent_down"},
    {Tensor::ffn_latent_up, "ffn_latent_up"},
    {Tensor::ffn_gate_inp_shexp, "ffn_gate_inp_shexp"},
    {Tensor::ffn_gate_shexp, "ffn_gate_shexp"},
    {Tensor::ffn_up_shexp, "ffn_up_shexp"},
    {Tensor::ffn_down_shexp, "ffn_down_shexp"},
    {Tensor::ssm_in, "ssm_in"},
    {Tensor::ssm_conv1d, "ssm_conv1d"},
    {Tensor::ssm_x, "ssm_x"},
    {Tensor::ssm_dt, "ssm_dt"},
    {Tensor::ssm_a, "ssm_a"},
    {Tensor::ssm_d, "ssm_d"},
    {Tensor::ssm_norm, "ssm_norm"},
    {Tensor::ssm_out, "ssm_out"},
    {Tensor::ssm_dt_norm, "ssm_dt_norm"},
    {Tensor::ssm_b_norm, "ssm_b_norm"},
    {Tensor::ssm_c_norm, "ssm_c_norm"},
    {Tensor::ssm_beta, "ssm_beta"},
    {Tensor::ssm_alpha, "ssm_alpha"},
    {Tensor::ssm_ba, "ssm_ba"},
    {Tensor::shortconv_conv, "shortconv.conv"},
    {Tensor::shortconv_in_proj, "shortconv.in_proj"},
    {Tensor::shortconv_out_proj, "shortconv.out_proj"},
    {Tensor::nextn_eh_proj, "nextn.eh_proj"},
    {Tensor::nextn_enorm, "nextn.enorm"},
    {Tensor::nextn_hnorm, "nextn.hnorm"},
    {Tensor::nextn_embed_tokens, "nextn.embed_tokens"},
    {Tensor::nextn_shared_head_head, "nextn.shared_head_head"},
    {Tensor::nextn_shared_head_norm, "nextn.shared_head_norm"},
    {Tensor::post_ffw_norm, "post_ffw_norm"},
    {Tensor::attn_sinks, "attn_sinks"},
    {Tensor::layer_output_scale, "layer_output_scale"},
    {Tensor::pre_ffw_norm_2, "pre_ffw_norm_2"},
    {Tensor::post_ffw_norm_1, "post_ffw_norm_1"},
    {Tensor::post_ffw_norm_2, "post_ffw_norm_2"},
    {Tensor::per_layer_token_embd, "per_layer_token_embd"},
    {Tensor::per_layer_model_proj, "per_layer_model_proj"},
    {Tensor::per_layer_proj_norm, "per_layer_proj_norm"},
    {Tensor::per_layer_inp_gate, "inp_gate"},
    {Tensor::per_layer_proj, "proj"},
    {Tensor::per_layer_post_norm, "post_norm"},
};
static_assert(std::size(kTensors) == static_cast<size_t>(Tensor::count), "a Tensor without a name");

constexpr bool keys_in_order() {
  for (size_t i = 0; i < std::size(kKeys); ++i)
    if (static_cast<size_t>(kKeys[i].key) != i) return false;
  return true;
}
constexpr bool tensors_in_order() {
  for (size_t i = 0; i < std::size(kTensors); ++i)
    if (static_cast<size_t>(kTensors[i].tensor) != i) return false;
  return true;
}
static_assert(keys_in_order(), "kKeys must follow Key's order");
static_assert(tensors_in_order(), "kTensors must follow Tensor's order");

std::string with_suffix(std::string name, std::string_view suffix) {
  if (!suffix.empty()) name.append(".").append(suffix);
  return name;
}

}  // namespace

std::string key(Key k, std::string_view arch) {
  const KeyName& n = kKeys[static_cast<size_t>(k)];
  if (!n.per_arch) return n.name;
  return std::string(arch) + "." + n.name;
}

std::string_view base(Tensor t) {
  return kTensors[static_cast<size_t>(t)].name;
}

std::string tensor(Tensor t, std::string_view suffix) {
  return with_suffix(std::string(base(t)), suffix);
}

std::string tensor(Tensor t, uint32_t layer, std::string_view suffix) {
  return with_suffix("blk." + std::to_string(layer) + "." + std::string(base(t)), suffix);
}

}  // namespace sy::model::names
