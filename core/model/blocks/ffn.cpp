#include "model/blocks/ffn.h"

#include "model/blocks/ops.h"

namespace sy::model {

void ffn_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, int64_t n_ff,
                 const LinearRules& rules, bool gated, FfnWeights& w, FfnNames n,
                 bool writer_order) {
  const int64_t E = d.n_embd, F = n_ff;
  const Init res{Init::residual, 0.0f};
  auto name = [&](names::Tensor tn) { return names::tensor(tn, il, ""); };
  if (writer_order) {  // the file order of jamba's converter: gate, down, up
    if (gated) w.gate = t.linear(name(n.gate), E, F, rules);
    w.down = t.linear(name(n.down), F, E, rules, res);
    w.up = t.linear(name(n.up), E, F, rules);
    return;
  }
  if (gated) w.gate = t.linear(name(n.gate), E, F, rules);
  w.up = t.linear(name(n.up), E, F, rules);
  w.down = t.linear(name(n.down), F, E, rules, res);
}

uint64_t ffn_scratch(int64_t n_ff) {
  return 2ull * static_cast<uint64_t>(n_ff) + 32;
}

void ffn(LayerPass& p, const FfnWeights& w, FfnAct act, const sy_tensor& xn, const sy_tensor& out) {
  const int64_t T = p.n_tokens(), F = w.up.w.ne[1];
  const sy_tensor up = p.scratch.f32({F, T});
  apply_linear(p.b, w.up, xn, up);
  if (act == FfnAct::relu_sqr) {
    unary(p.b, SY_UNARY_RELU_SQR, up, up);
    apply_linear(p.b, w.down, up, out);
    return;
  }
  const sy_tensor gate = p.scratch.f32({F, T});
  apply_linear(p.b, w.gate, xn, gate);
  if (act == FfnAct::geglu) {  // gelu(gate) * up (ggml_geglu_split)
    unary(p.b, SY_UNARY_GELU, gate, gate);
    p.b.mul(&gate, &up, &gate);
  } else {
    p.b.swiglu(&gate, &up, &gate);
  }
  apply_linear(p.b, w.down, gate, out);
}

}  // namespace sy::model
