#include "model/blocks/mamba.h"

#include <cmath>

#include "model/blocks/ops.h"
#include "model/blocks/recurrent.h"
#include "model/names.h"

namespace sy::model {

using names::Tensor;

void mamba_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, bool norms, bool scale,
                   MambaWeights& w) {
  const int64_t E = d.n_embd, DI = d.d_inner, S = d.d_state, R = d.dt_rank, K = d.d_conv;
  auto name = [&](Tensor tn, const char* suffix = "weight") {
    return names::tensor(tn, il, suffix);
  };
  const Linear in = t.linear(name(Tensor::ssm_in, ""), E, 2 * DI, {Take::no, scale, false, false});
  w.in_x = w.in_z = in;
  w.in_x.w = rows_of(in.w, 0, DI);
  w.in_z.w = rows_of(in.w, DI, DI);
  w.conv_w = &t.f32(name(Tensor::ssm_conv1d), {K, DI}, {Init::normal, 1.0f / std::sqrt(float(K))});
  w.conv_b = &t.f32(name(Tensor::ssm_conv1d, "bias"), {DI}, {Init::normal, 0.1f});
  const sy_tensor& xp = t.matrix(name(Tensor::ssm_x), {DI, R + 2 * S});
  w.x_dt = rows_of(xp, 0, R);
  w.x_b = rows_of(xp, R, S);
  w.x_c = rows_of(xp, R + S, S);
  if (norms) {
    w.dt_norm = &t.norm(name(Tensor::ssm_dt_norm), R);
    w.b_norm = &t.norm(name(Tensor::ssm_b_norm), S);
    w.c_norm = &t.norm(name(Tensor::ssm_c_norm), S);
  }
  w.dt_w = &t.matrix(name(Tensor::ssm_dt), {R, DI});
  w.dt_b = &t.f32(name(Tensor::ssm_dt, "bias"), {DI}, {Init::dt_bias, 0.0f});
  w.a = &t.f32(name(Tensor::ssm_a, ""), {S, DI}, {Init::a_log, float(S)});
  w.d = &t.f32(name(Tensor::ssm_d, ""), {DI}, {Init::norm, 0.0f});
  w.out = t.linear(name(Tensor::ssm_out, ""), DI, E, {Take::no, scale}, {Init::residual, 0.0f});
}

uint64_t mamba_scratch(const ModelDesc& d) {
  return 5ull * d.d_inner + d.dt_rank + 2ull * d.d_state + 8 * 16;
}

void mamba(LayerPass& p, const MambaWeights& L, const sy_tensor& xn, const sy_tensor& out) {
  Backend& b = p.b;
  const int64_t T = p.n_tokens(), DI = p.d.d_inner, S = p.d.d_state, R = p.d.dt_rank;
  const sy_tensor u = p.scratch.f32({DI, T});
  const sy_tensor z = p.scratch.f32({DI, T});
  const sy_tensor uc = p.scratch.f32({DI, T});
  const sy_tensor dtr = p.scratch.f32({R, T});
  const sy_tensor bm = p.scratch.f32({S, T});
  const sy_tensor cm = p.scratch.f32({S, T});
  const sy_tensor dt = p.scratch.f32({DI, T});
  const sy_tensor y = p.scratch.f32({DI, T});
  apply_linear(b, L.in_x, xn, u);
  apply_linear(b, L.in_z, xn, z);
  const uint32_t r = L.state_layer;
  conv_calls(p, r, u, L.conv_w, L.conv_b, true, uc);
  b.matmul(&uc, &L.x_dt, &dtr);
  b.matmul(&uc, &L.x_b, &bm);
  b.matmul(&uc, &L.x_c, &cm);
  if (L.dt_norm) {
    b.rms_norm(&dtr, L.dt_norm, p.d.rms_eps, &dtr);
    b.rms_norm(&bm, L.b_norm, p.d.rms_eps, &bm);
    b.rms_norm(&cm, L.c_norm, p.d.rms_eps, &cm);
  }
  b.matmul(&dtr, L.dt_w, &dt);
  scan_calls(p, r, [&](const SsmCall& c) {
    const int64_t t0 = c.t0, n = c.n_tokens;
    const sy_tensor cu = columns(uc, t0, n), cdt = columns(dt, t0, n), cb = columns(bm, t0, n),
                    cc = columns(cm, t0, n), cz = columns(z, t0, n), cy = columns(y, t0, n);
    sy_ssm_scan_args sa{};
    sa.struct_size = sizeof sa;
    sa.n_seqs = static_cast<uint32_t>(c.slots.size());
    sa.u = &cu, sa.dt = &cdt, sa.dt_bias = L.dt_b, sa.a = L.a, sa.b = &cb, sa.c = &cc, sa.d = L.d;
    sa.z = &cz, sa.y = &cy;
    sa.state = &p.state.ssm(r);
    sa.seq_token_start = c.seq_start.data();
    sa.state_slots = c.slots.data();
    b.ssm_scan(&sa);
  });
  apply_linear(b, L.out, y, out);
}

}  // namespace sy::model
