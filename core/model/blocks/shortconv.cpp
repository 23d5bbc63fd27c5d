#include "model/blocks/shortconv.h"

#include <cmath>

#include "model/blocks/ops.h"
#include "model/blocks/recurrent.h"
#include "model/names.h"

namespace sy::model {

using names::Tensor;

void shortconv_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, ShortConvWeights& w) {
  const int64_t E = d.n_embd, L = d.d_conv;
  LinearRules proj;
  proj.generic_scales = false;
  LinearRules split = proj;
  split.packed = false;
  const Linear in = t.linear(names::tensor(Tensor::shortconv_in_proj, il, ""), E, 3 * E, split);
  w.in_b = w.in_c = w.in_x = in;
  w.in_b.w = t.packed(rows_of(in.w, 0, E));
  w.in_c.w = t.packed(rows_of(in.w, E, E));
  w.in_x.w = t.packed(rows_of(in.w, 2 * E, E));
  w.conv_w = &t.f32(names::tensor(Tensor::shortconv_conv, il), {L, E},
                    {Init::normal, 1.0f / std::sqrt(float(L))});
  w.out = t.linear(names::tensor(Tensor::shortconv_out_proj, il, ""), E, E, proj,
                   {Init::residual, 0.0f});
}

uint64_t shortconv_scratch(const ModelDesc& d) {
  return 4ull * d.n_embd + 4 * 16;
}

void shortconv(LayerPass& p, const ShortConvWeights& L, const sy_tensor& xn, const sy_tensor& out) {
  Backend& b = p.b;
  const int64_t T = p.n_tokens(), E = p.d.n_embd;
  const sy_tensor bm = p.scratch.f32({E, T});
  const sy_tensor cm = p.scratch.f32({E, T});
  const sy_tensor xm = p.scratch.f32({E, T});
  const sy_tensor y = p.scratch.f32({E, T});
  apply_linear(b, L.in_b, xn, bm);
  apply_linear(b, L.in_c, xn, cm);
  apply_linear(b, L.in_x, xn, xm);
  b.mul(&bm, &xm, &bm);
  conv_calls(p, L.state_layer, bm, L.conv_w, nullptr, false, y);
  b.mul(&cm, &y, &y);
  apply_linear(b, L.out, y, out);
}

}  // namespace sy::model
