#include "bench/model_costs.h"

#include <algorithm>

#include "model/arch/arch.h"
#include "modelgen/tables.h"

namespace sy::bench {

using model::ModelDesc;
using model::ModelShape;

namespace {

ModelDesc describe(const ModelShape& s) {
  return model::describe_shape(s);
}

// Parameters of d's tensor table: {all, those one token uses}.
std::pair<uint64_t, uint64_t> counted(const ModelDesc& d) {
  model::CountTable t(d);
  model::ModelWeights w;
  model::find_arch(d.arch)->tensors(t, d, w);
  return {t.params, t.active_params};
}

}  // namespace

uint64_t params(const ModelDesc& d) {
  return counted(d).first;
}
uint64_t active_params(const ModelDesc& d) {
  return counted(d).second;
}

uint64_t kv_bytes_per_token(const ModelDesc& d, uint32_t elem_bytes) {
  uint64_t floats = 0;
  for (uint32_t w : d.kv_widths()) floats += w;
  return 2 * floats * elem_bytes;
}

double kv_bytes_per_decode_step(const ModelDesc& d, uint32_t elem_bytes, uint64_t prompt_len,
                                uint64_t steps) {
  // Step i attends to prompt_len + i + 1 positions, at most the window in a windowed layer.
  double bytes = 0;
  for (uint64_t i = 0; i < steps; ++i) bytes += kv_bytes_at(d, elem_bytes, prompt_len + i + 1);
  return bytes / double(std::max<uint64_t>(steps, 1));
}

namespace {

// K and V floats of `positions` tokens over the attention layers (only those holding a cache of
// their own when `held`), at most a window's in a sliding-window layer.
double kv_floats(const ModelDesc& d, uint64_t positions, bool held) {
  double floats = 0;
  for (uint32_t il = 0; il < d.layers.size(); ++il)
    if (held ? d.has_kv(il) : d.layers[il].has_attention())
      floats += double(d.attended(d.layers[il], positions)) * d.kv_width_at(il);
  return floats * 2.0;
}

}  // namespace

double kv_bytes_at(const ModelDesc& d, uint32_t elem_bytes, uint64_t positions) {
  return kv_floats(d, positions, false) * elem_bytes;
}

double kv_bytes_held(const ModelDesc& d, uint32_t elem_bytes, uint64_t positions) {
  return kv_floats(d, positions, true) * elem_bytes;
}

uint64_t state_bytes_per_seq(const ModelDesc& d) {
  return uint64_t(d.n_recurrent_layers()) * (d.conv_state_floats() + d.ssm_state_floats()) * 4;
}

// FLOPs of one token at position `pos` (it attends to pos + 1 keys, at most the window): 2 per
// multiply-add of every active matrix (the embedding is a lookup; a tied output counts once),
// attention 4 * q_width per key and layer (scores and the weighted sum), and per recurrent layer
// the conv (2 per tap and channel) and the scan: ~6 per (channel, state) for Mamba's, 7 per state
// element for a gated delta net (decay, two dot products, the rank-1 update). Norms and
// element-wise ops are left out (under 1%).
double flops_per_token(const ModelDesc& d, uint64_t pos, bool with_output) {
  const double VE = double(d.n_vocab) * d.n_embd;
  double macs = double(active_params(d)) - VE + (d.tied_output ? VE : 0.0);
  if (!with_output) macs -= VE;
  double mixers = 0;
  for (uint32_t il = 0; il < d.layers.size(); ++il) {
    const model::LayerSpec& s = d.layers[il];
    if (s.has_attention()) mixers += 4.0 * d.q_width_at(il) * double(d.attended(s, pos + 1));
    const double conv = 2.0 * d.d_conv * double(d.conv_channels());
    switch (s.mixer) {
      case model::Mixer::ssm:
      case model::Mixer::ssm2:
      case model::Mixer::parallel:
        mixers += conv + 6.0 * d.d_state * double(d.d_inner);
        break;
      case model::Mixer::gdn:
        mixers += conv + 7.0 * d.d_state * double(d.d_inner);
        break;
      case model::Mixer::shortconv:
        mixers += conv + 2.0 * d.n_embd;
        break;
      default:
        break;
    }
  }
  return 2.0 * macs + mixers;
}

uint32_t n_attn_layers(const ModelShape& s) {
  return describe(s).n_attn_layers();
}
uint32_t n_moe_layers(const ModelShape& s) {
  return describe(s).n_moe_layers();
}
uint64_t kv_bytes_per_token(const ModelShape& s, uint32_t elem_bytes) {
  return kv_bytes_per_token(describe(s), elem_bytes);
}
double kv_bytes_per_decode_step(const ModelShape& s, uint32_t elem_bytes, uint64_t prompt_len,
                                uint64_t steps) {
  return kv_bytes_per_decode_step(describe(s), elem_bytes, prompt_len, steps);
}
double flops_per_token(const ModelShape& s, uint64_t pos, bool with_output) {
  return flops_per_token(describe(s), pos, with_output);
}

}  // namespace sy::bench
