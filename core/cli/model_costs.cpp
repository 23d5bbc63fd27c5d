#include "cli/model_costs.h"

namespace sy::cli {

uint32_t n_attn_layers(const model::ModelShape& s) {
  uint32_t n = 0;
  for (uint32_t l = 0; l < s.n_layer; ++l) n += s.is_attention_layer(l);
  return n;
}

uint64_t kv_bytes_per_token(const model::ModelShape& s, uint32_t elem_bytes) {
  return uint64_t(n_attn_layers(s)) * 2 * (s.n_embd / s.n_head) * s.n_head_kv * elem_bytes;
}

double flops_per_token(const model::ModelShape& s, uint64_t pos, bool with_output) {
  const double VE = double(s.n_vocab) * s.n_embd;
  // Multiply-adds of the active matrices: not the lookup table, but the output (the table
  // itself when tied); prefill computes logits only for its last token.
  double macs = double(model::count_active_params(s)) - VE + (s.tied_output ? VE : 0.0);
  if (!with_output) macs -= VE;
  const double attn = 4.0 * s.n_embd * double(pos + 1) * n_attn_layers(s);
  const double ssm = double(s.n_layer - n_attn_layers(s)) * s.d_inner() *
                     (6.0 * s.ssm_d_state + 2.0 * s.ssm_d_conv);
  return 2.0 * macs + attn + ssm;
}

}  // namespace sy::cli
