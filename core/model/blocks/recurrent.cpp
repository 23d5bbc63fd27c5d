#include "model/blocks/recurrent.h"

namespace sy::model {

void conv_calls(LayerPass& p, uint32_t r, const sy_tensor& x, const sy_tensor* weight,
                const sy_tensor* bias, bool silu, const sy_tensor& y) {
  for (const SsmCall& c : p.bt.ssm) {
    const sy_tensor cx = columns(x, c.t0, c.n_tokens), cy = columns(y, c.t0, c.n_tokens);
    sy_ssm_conv_args a{};
    a.struct_size = sizeof a;
    a.n_seqs = static_cast<uint32_t>(c.slots.size());
    a.x = &cx;
    a.weight = weight;
    a.bias = bias;
    a.y = &cy;
    a.state = &p.state.conv(r);
    a.seq_token_start = c.seq_start.data();
    a.state_slots = c.slots.data();
    a.apply_silu = silu ? 1u : 0u;
    p.b.ssm_conv(&a);
    for (const auto& [from, to] : c.copies) p.state.copy_conv(r, from, to);
  }
}

void scan_calls(LayerPass& p, uint32_t r, const std::function<void(const SsmCall&)>& scan) {
  for (const SsmCall& c : p.bt.ssm) {
    scan(c);
    for (const auto& [from, to] : c.copies) p.state.copy_ssm(r, from, to);
  }
}

}  // namespace sy::model
