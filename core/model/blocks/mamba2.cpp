#include "model/blocks/mamba2.h"

#include <cmath>

#include "model/blocks/ops.h"
#include "model/blocks/recurrent.h"
#include "model/names.h"

namespace sy::model {

using names::Tensor;

void mamba2_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const Mamba2Rules& r,
                    Mamba2Weights& w) {
  const int64_t E = d.n_embd, DI = d.d_inner, H = d.dt_rank, K = d.d_conv;
  const int64_t C = static_cast<int64_t>(d.conv_channels()), G = d.n_group;
  auto name = [&](Tensor tn, const char* suffix = "weight") {
    return names::tensor(tn, il, suffix);
  };
  // Output rows in order: z (d_inner), xBC (d_inner + 2 G N), dt (n_head).
  const Linear in =
      t.linear(name(Tensor::ssm_in, ""), E, DI + C + H, {Take::no, r.scale, false, false});
  w.in_z = w.in_xbc = w.in_dt = in;
  w.in_z.w = t.packed(rows_of(in.w, 0, DI));
  w.in_xbc.w = t.packed(rows_of(in.w, DI, C));
  w.in_dt.w = t.packed(rows_of(in.w, DI + C, H));
  w.conv_w = &t.f32(name(Tensor::ssm_conv1d), {K, C}, {Init::normal, 1.0f / std::sqrt(float(K))});
  // "Optional" in the hybrids' loaders but added by every graph: llama.cpp cannot run without it.
  w.conv_b = &t.f32(name(Tensor::ssm_conv1d, "bias"), {C}, {Init::normal, 0.1f});
  w.dt_b = &t.f32(name(Tensor::ssm_dt, "bias"), {H}, {Init::dt_bias, 0.0f});
  w.a = &t.f32(name(Tensor::ssm_a, ""), {1, H}, {Init::a_head, 0.0f});
  w.d = &t.f32(name(Tensor::ssm_d, ""), {1, H}, {Init::norm, 0.0f});
  w.norm = t.optional_f32(name(Tensor::ssm_norm), {DI / G, G}, {Init::norm, 0.0f}, r.norm);
  w.out = t.linear(name(Tensor::ssm_out, ""), DI, E, {Take::no, r.scale}, {Init::residual, 0.0f});
}

uint64_t mamba2_scratch(const ModelDesc& d) {
  return 2ull * d.d_inner + 2 * d.conv_channels() + d.dt_rank + 5 * 16;
}

void mamba2(LayerPass& p, const Mamba2Weights& L, const sy_tensor& xn, const sy_tensor& out) {
  Backend& b = p.b;
  const ModelDesc& d = p.d;
  const int64_t T = p.n_tokens(), DI = d.d_inner, H = d.dt_rank, G = d.n_group;
  const int64_t C = static_cast<int64_t>(d.conv_channels());
  const sy_tensor z = p.scratch.f32({DI, T});
  const sy_tensor xbc = p.scratch.f32({C, T});
  const sy_tensor xbc_c = p.scratch.f32({C, T});
  const sy_tensor dt = p.scratch.f32({H, T});
  const sy_tensor y = p.scratch.f32({DI, T});
  apply_linear(b, L.in_z, xn, z);
  apply_linear(b, L.in_xbc, xn, xbc);
  apply_linear(b, L.in_dt, xn, dt);
  const uint32_t r = L.state_layer;
  conv_calls(p, r, xbc, L.conv_w, L.conv_b, true, xbc_c);
  const sy_tensor a = view(*L.a, {H}), dd = view(*L.d, {H});
  scan_calls(p, r, [&](const SsmCall& c) {
    const int64_t t0 = c.t0, n = c.n_tokens;
    const sy_tensor cx = columns(xbc_c, t0, n), cdt = columns(dt, t0, n), cz = columns(z, t0, n),
                    cy = columns(y, t0, n);
    sy_ssm_scan2_args sa{};
    sa.struct_size = sizeof sa;
    sa.n_seqs = static_cast<uint32_t>(c.slots.size());
    sa.xbc = &cx;
    sa.dt = &cdt;
    sa.dt_bias = L.dt_b;
    sa.a = &a;
    sa.d = &dd;
    sa.z = &cz;
    sa.state = &p.state.ssm(r);
    sa.y = &cy;
    sa.seq_token_start = c.seq_start.data();
    sa.state_slots = c.slots.data();
    b.ssm_scan2(&sa);
  });
  if (L.norm) {  // each group's d_inner / G channels normed on their own
    const sy_tensor yg = view(y, {DI / G, G * T});
    norm(b, SY_NORM_RMS, yg, L.norm, d.rms_eps, yg);
  }
  apply_linear(b, L.out, y, out);
}

}  // namespace sy::model
