#include "bench/model_costs.h"

namespace sy::bench {

using model::ModelShape;

uint32_t n_attn_layers(const ModelShape& s) {
  uint32_t n = 0;
  for (uint32_t l = 0; l < s.n_layer; ++l) n += s.is_attention_layer(l);
  return n;
}
uint64_t kv_bytes_per_token(const ModelShape& s, uint32_t elem_bytes) {
  return uint64_t(n_attn_layers(s)) * 2 * (s.n_embd / s.n_head) * s.n_head_kv * elem_bytes;
}
double kv_bytes_per_decode_step(const ModelShape& s, uint32_t elem_bytes, uint64_t prompt_len,
                                uint64_t steps) {
  return double(kv_bytes_per_token(s, elem_bytes)) * (double(prompt_len) + (steps + 1) / 2.0);
}
// FLOPs of one token at position `pos` (it attends to pos + 1 keys): 2 per multiply-add of
// every active matrix (the embedding is a lookup; a tied output counts once), attention
// 4 * n_embd per key and layer (scores and the weighted sum), the scan ~6 per (channel, state)
// plus the conv, per recurrent layer. Norms and element-wise ops are left out (under 1%).
double flops_per_token(const ModelShape& s, uint64_t pos, bool with_output) {
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

uint32_t n_moe_layers(const ModelShape& s) {
  uint32_t n = 0;
  for (uint32_t l = 0; l < s.n_layer; ++l) n += s.is_moe_layer(l);
  return n;
}

}  // namespace sy::bench
