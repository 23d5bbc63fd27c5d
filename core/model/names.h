// The GGUF names every layer agrees on: llama.cpp's metadata keys (LLM_KV_NAMES) and tensor names
// (LLM_TENSOR_NAMES) for the architectures Switchyard runs. The loader, the random-model writer,
// the bench's cost model and the tests build names here, never from literals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sy::model::names {

// A metadata key; per-architecture keys are prefixed with the architecture ("llama.").
enum class Key : uint16_t {
  general_architecture,
  general_name,
  general_file_type,
  general_quantization_version,
  vocab_size,
  context_length,
  embedding_length,
  block_count,
  feed_forward_length,
  expert_feed_forward_length,
  expert_shared_feed_forward_length,
  expert_count,
  expert_used_count,
  expert_shared_count,
  expert_weights_scale,
  expert_weights_norm,
  expert_gating_func,
  expert_group_count,
  expert_group_used_count,
  leading_dense_block_count,
  moe_latent_size,
  logit_scale,
  residual_scale,
  embedding_scale,
  full_attention_interval,
  nextn_predict_layers,
  head_count,
  head_count_kv,
  key_length,
  value_length,
  layer_norm_rms_epsilon,
  causal,
  sliding_window,
  attention_scale,
  attention_temperature_scale,
  rope_dimension_count,
  rope_dimension_sections,
  rope_freq_base,
  rope_scaling_type,
  rope_scaling_factor,
  rope_scale_linear,
  rope_scaling_attn_factor,
  rope_scaling_original_context_length,
  rope_scaling_finetuned,
  rope_scaling_yarn_log_multiplier,
  rope_scaling_yarn_beta_fast,
  rope_scaling_yarn_beta_slow,
  ssm_conv_kernel,
  ssm_inner_size,
  ssm_state_size,
  ssm_time_step_rank,
  ssm_group_count,
  ssm_dt_b_c_rms,
  shortconv_l_cache,
  classifier_output_labels,
  sliding_window_pattern,
  rope_freq_base_swa,
  final_logit_softcapping,
  key_length_swa,
  value_length_swa,
  rope_dimension_count_swa,
  shared_kv_layers,
  embedding_length_per_layer_input,
  attn_logit_softcapping,
  count
};

// "general.name", or "<arch>.attention.head_count" for a per-architecture key.
std::string key(Key k, std::string_view arch);

// A tensor; per-layer tensors are "blk.<layer>.<name>".
enum class Tensor : uint16_t {
  // global
  token_embd,
  token_embd_norm,  // lfm2's final norm
  output_norm,
  output,
  rope_freqs,
  rope_factors_long,   // Phi-3's LongRoPE factors: long contexts
  rope_factors_short,  // and short ones
  cls_out,             // a reranker's classification head
  // per layer: norms
  attn_norm,
  attn_q_norm,
  attn_k_norm,
  post_attention_norm,
  ffn_norm,
  // attention
  attn_q,
  attn_k,
  attn_v,
  attn_qkv,
  attn_output,
  attn_gate,
  // dense FFN
  ffn_gate,
  ffn_up,
  ffn_down,
  // MoE
  ffn_gate_inp,
  ffn_gate_exps,
  ffn_up_exps,
  ffn_down_exps,
  ffn_gate_up_exps,
  exp_probs_b,
  ffn_latent_down,
  ffn_latent_up,
  ffn_gate_inp_shexp,
  ffn_gate_shexp,
  ffn_up_shexp,
  ffn_down_shexp,
  // state spaces and gated delta nets
  ssm_in,
  ssm_conv1d,
  ssm_x,
  ssm_dt,
  ssm_a,
  ssm_d,
  ssm_norm,
  ssm_out,
  ssm_dt_norm,
  ssm_b_norm,
  ssm_c_norm,
  ssm_beta,
  ssm_alpha,
  ssm_ba,
  // short convolutions
  shortconv_conv,
  shortconv_in_proj,
  shortconv_out_proj,
  // multi-token prediction blocks (Qwen3.5 nextn)
  nextn_eh_proj,
  nextn_enorm,
  nextn_hnorm,
  nextn_embed_tokens,
  nextn_shared_head_head,
  nextn_shared_head_norm,
  post_ffw_norm,       // Gemma's norm of the FFN output
  attn_sinks,          // gpt-oss's sink logit per head
  layer_output_scale,  // Gemma 4's scale of a layer's output
  pre_ffw_norm_2,      // Gemma 4's MoE layers: the experts' pre-norm,
  post_ffw_norm_1,     // the dense FFN's output norm
  post_ffw_norm_2,     // and the experts' output norm
  // Gemma 4 E2B/E4B's per-layer input embeddings: the global table, projection and its norm,
  per_layer_token_embd,
  per_layer_model_proj,
  per_layer_proj_norm,
  per_layer_inp_gate,   // then per layer the gate of the stream,
  per_layer_proj,       // the projection back to n_embd
  per_layer_post_norm,  // and its norm
  count
};

// "<name>.<suffix>" for a global tensor ("output.weight"); suffix "" gives the bare name.
std::string tensor(Tensor t, std::string_view suffix = "weight");
// "blk.<layer>.<name>.<suffix>" ("blk.3.attn_q.bias", or "blk.3.ssm_a" with suffix "").
std::string tensor(Tensor t, uint32_t layer, std::string_view suffix = "weight");
// The bare name ("attn_q"), for rules that match every layer's tensor.
std::string_view base(Tensor t);

}  // namespace sy::model::names
