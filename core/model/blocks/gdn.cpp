#include "model/blocks/gdn.h"

#include <cmath>

#include "model/blocks/ops.h"
#include "model/blocks/recurrent.h"
#include "model/names.h"

namespace sy::model {

using names::Tensor;

void gdn_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const GdnRules& r,
                 GdnWeights& w) {
  const int64_t E = d.n_embd, S = d.d_state, HV = d.dt_rank, HK = d.n_group, K = d.d_conv;
  const int64_t C = static_cast<int64_t>(d.conv_channels()), V = d.d_inner;
  auto base = [&](Tensor tn) { return names::tensor(tn, il, ""); };
  const LinearRules proj{Take::no, r.scales};
  w.head_map = r.head_map;
  const std::string legacy = names::tensor(Tensor::ssm_in, il);
  if (r.ba_fused && t.has(legacy)) {
    // Qwen3-Next's first converter: ssm_in {E, 2 HK S + 2 HV S} per key head [q | k | v grp | z
    // grp], regrouped into [q | k | v | z] so that each part is a block of rows.
    LinearRules fused = proj;
    fused.packed = false;
    const Linear l = t.linear(base(Tensor::ssm_in), E, C + V, fused);
    const int64_t rv = HV / HK * S, per = 2 * S + 2 * rv;
    std::vector<int64_t> perm(C + V);
    for (int64_t h = 0; h < HK; ++h)
      for (int64_t i = 0; i < per; ++i) {
        const int64_t src = h * per + i;
        if (i < S)
          perm[src] = h * S + i;  // q
        else if (i < 2 * S)
          perm[src] = HK * S + h * S + (i - S);  // k
        else if (i < 2 * S + rv)
          perm[src] = 2 * HK * S + h * rv + (i - 2 * S);  // v
        else
          perm[src] = C + h * rv + (i - 2 * S - rv);  // z
      }
    const sy_tensor g = t.permuted(l.w, perm);
    w.qkv = w.z = l;
    w.qkv.w = t.packed(rows_of(g, 0, C));
    w.z.w = t.packed(rows_of(g, C, V));
  } else {
    w.qkv = t.linear(base(Tensor::attn_qkv), E, C, proj);
    w.z = t.linear(base(Tensor::attn_gate), E, V, proj);
  }
  w.conv_w = &t.f32(names::tensor(Tensor::ssm_conv1d, il), {K, C},
                    {Init::normal, 1.0f / std::sqrt(float(K))});
  w.dt_b = &t.f32(names::tensor(Tensor::ssm_dt, il, "bias"), {HV}, {Init::dt_bias, 0.0f});
  w.a = &t.f32(base(Tensor::ssm_a), {HV}, {Init::a_head, 0.0f});
  if (r.ba_fused) {
    // ssm_ba {E, 2 HV}: per key head r beta rows then r alpha rows; regrouped into [beta | alpha]
    // in value-head order (value head j = key head * r + i).
    LinearRules fused = proj;
    fused.packed = false;
    fused.generic_scales = false;
    const Linear l = t.linear(base(Tensor::ssm_ba), E, 2 * HV, fused);
    const int64_t rr = HV / HK;
    std::vector<int64_t> perm(2 * HV);
    for (int64_t h = 0; h < HK; ++h)
      for (int64_t i = 0; i < 2 * rr; ++i)
        perm[h * 2 * rr + i] = i < rr ? h * rr + i : HV + h * rr + (i - rr);
    const sy_tensor g = t.permuted(l.w, perm);
    w.beta = w.alpha = l;
    w.beta.w = rows_of(g, 0, HV);
    w.alpha.w = rows_of(g, HV, HV);
  } else {
    w.beta = t.linear(base(Tensor::ssm_beta), E, HV, proj);
    w.alpha = t.linear(base(Tensor::ssm_alpha), E, HV, proj);
  }
  w.norm = &t.norm(names::tensor(Tensor::ssm_norm, il), S);
  w.out = t.linear(base(Tensor::ssm_out), V, E, {Take::no, r.out_scale}, {Init::residual, 0.0f});
}

uint64_t gdn_scratch(const ModelDesc& d) {
  return 2ull * d.conv_channels() + 3ull * d.d_inner + 2ull * d.dt_rank + 7 * 16;
}

void gated_delta_net(LayerPass& p, const GdnWeights& L, const sy_tensor& xn, const sy_tensor& out) {
  Backend& b = p.b;
  const ModelDesc& d = p.d;
  const int64_t T = p.n_tokens(), S = d.d_state, HV = d.dt_rank, V = d.d_inner;
  const int64_t C = static_cast<int64_t>(d.conv_channels());
  const sy_tensor qkv = p.scratch.f32({C, T});
  const sy_tensor qkv_c = p.scratch.f32({C, T});
  const sy_tensor z = p.scratch.f32({V, T});
  const sy_tensor beta = p.scratch.f32({HV, T});
  const sy_tensor alpha = p.scratch.f32({HV, T});
  const sy_tensor o = p.scratch.f32({V, T});
  apply_linear(b, L.qkv, xn, qkv);
  apply_linear(b, L.z, xn, z);
  apply_linear(b, L.beta, xn, beta);
  apply_linear(b, L.alpha, xn, alpha);
  const uint32_t r = L.state_layer;
  conv_calls(p, r, qkv, L.conv_w, nullptr, true, qkv_c);
  const sy_tensor state = view(p.state.ssm(r), {S, S, HV, p.state.ssm(r).ne[2]});
  scan_calls(p, r, [&](const SsmCall& c) {
    const int64_t t0 = c.t0, n = c.n_tokens;
    const sy_tensor cq = columns(qkv_c, t0, n), ca = columns(alpha, t0, n),
                    cb = columns(beta, t0, n), cy = view(columns(o, t0, n), {S, HV, n});
    sy_gated_delta_net_args ga{};
    ga.struct_size = sizeof ga;
    ga.n_seqs = static_cast<uint32_t>(c.slots.size());
    ga.qkv = &cq;
    ga.alpha = &ca;
    ga.beta = &cb;
    ga.dt_bias = L.dt_b;
    ga.a = L.a;
    ga.state = &state;
    ga.y = &cy;
    ga.seq_token_start = c.seq_start.data();
    ga.state_slots = c.slots.data();
    ga.head_map = L.head_map;
    ga.eps = d.rms_eps;
    b.gated_delta_net(&ga);
  });
  const sy_tensor oh = view(o, {S, HV * T});  // per head, one weight {S} for all heads
  b.rms_norm(&oh, L.norm, d.rms_eps, &oh);
  b.swiglu(&z, &o, &o);  // silu(z) * norm(o)
  apply_linear(b, L.out, o, out);
}

}  // namespace sy::model
