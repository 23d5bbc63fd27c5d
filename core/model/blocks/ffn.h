// The dense FFN, as llama.cpp's build_ffn computes it: gate and up projections with their
// optional bias and scale (bias first), SiLU(gate) * up or an ungated max(up, 0)^2 (Nemotron-H),
// then the down projection. Also the MoE shared expert's body.
#pragma once

#include <cstdint>

#include "model/layer_pass.h"
#include "model/names.h"
#include "model/tensor_table.h"

namespace sy::model {

struct FfnWeights {
  Linear gate, up, down;  // gate absent: ungated
};

// Which tensors make an FFN: the dense one (ffn_gate/up/down) or a shared expert (_shexp).
struct FfnNames {
  names::Tensor gate = names::Tensor::ffn_gate, up = names::Tensor::ffn_up,
                down = names::Tensor::ffn_down;
};
constexpr FfnNames kSharedExpert{names::Tensor::ffn_gate_shexp, names::Tensor::ffn_up_shexp,
                                 names::Tensor::ffn_down_shexp};

// Layer il's FFN of width n_ff in llama.cpp's order (gate, up, down; `writer_order` gate, down, up
// is jamba's converter order); gated false: no gate tensor (relu^2).
void ffn_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, int64_t n_ff,
                 const LinearRules& rules, bool gated, FfnWeights& w, FfnNames n = {},
                 bool writer_order = false);
uint64_t ffn_scratch(int64_t n_ff);
// out{E, T} = FFN(xn{E, T}).
void ffn(LayerPass& p, const FfnWeights& w, FfnAct act, const sy_tensor& xn, const sy_tensor& out);

}  // namespace sy::model
