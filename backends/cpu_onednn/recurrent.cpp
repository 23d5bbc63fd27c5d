// The 1.5 recurrences: Mamba-2's scan and the gated delta rule. A work item is one head of one
// sequence, its tokens in order (the head's state stays in cache across a prefill chunk); the
// per-token scalars (softplus, decay, the gate, the L2 norms) are computed here in double as
// cpu_ref does, the state's pass is the path's kernel (kernels/recurrent.inc).
#include <algorithm>
#include <cmath>

#include "onednn_backend.h"

namespace sy::cpu_onednn {
namespace {

// State values per call above which the heads go to the pool.
constexpr int64_t kParallelMinValues = 1 << 14;

double softplus(double v) {
  return v > 20.0 ? v : std::log1p(std::exp(v));
}

// out = v / max(|v|_2, eps) (ggml_l2_norm). Four chains of double adds: one chain would be
// latency-bound, and a decode runs two norms per head beside each head's pass over its state.
void l2_normalise(const float* v, int64_t n, float eps, float* out) {
  double ss[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) ss[j] += (double)v[i + j] * v[i + j];
  for (; i < n; ++i) ss[0] += (double)v[i] * v[i];
  const double sum = (ss[0] + ss[1]) + (ss[2] + ss[3]);
  const double inv = 1.0 / std::max(std::sqrt(sum), (double)eps);
  for (i = 0; i < n; ++i) out[i] = (float)(v[i] * inv);
}

}  // namespace

void OnednnBackend::ssm_scan2(const plugin::SsmScan2Op& op) {
  const int64_t D = op.y.ne[0], H = op.n_head, S = op.d_state, P = D / H;
  const int64_t W = op.xbc.ne[0], heads_per_group = H / op.n_group;
  const float *xbc = op.xbc.f32(), *dt = op.dt.f32(), *a = op.a.f32();
  for_each_thread(
      (int64_t)op.n_seqs * H, op.y.nelements() * S >= kParallelMinValues, [&](int64_t w, int) {
        const int64_t s = w / H, h = w % H, g = h / heads_per_group;
        kernels::Ssm2Args k{};
        k.rows = P;
        k.d_state = S;
        k.state = op.state.f32() + (int64_t)op.state_slots[s] * S * D + h * P * S;
        k.dskip = op.d ? op.d[h] : 0.0f;
        for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
          const float* x = xbc + t * W;
          const double delta = softplus((double)dt[t * H + h] + (op.dt_bias ? op.dt_bias[h] : 0.0));
          k.x = x + h * P;
          k.b = x + D + g * S;
          k.c = x + D + op.n_group * S + g * S;
          k.z = op.z ? op.z + t * D + h * P : nullptr;
          k.delta = (float)delta;
          k.da = (float)std::exp(delta * a[h]);
          k.y = op.y.f32() + t * D + h * P;
          kernels_.ssm2_token(k);
        }
      });
}

void OnednnBackend::gated_delta_net(const plugin::GatedDeltaNetOp& op) {
  const int64_t S = op.head_dim, HK = op.n_k_head, HV = op.n_v_head, W = op.qkv.ne[0];
  const int64_t ratio = HV / HK;
  const bool modulo = op.head_map == SY_GDN_HEADS_MODULO;
  rec_scratch_.resize((size_t)(threads_ * 2 * S));
  const float *alpha = op.alpha.f32(), *beta = op.beta.f32();
  for_each_thread(
      (int64_t)op.n_seqs * HV, op.y.nelements() * S >= kParallelMinValues,
      [&](int64_t w, int thread) {
        const int64_t s = w / HV, j = w % HV, m = modulo ? j % HK : j / ratio;
        float* qn = rec_scratch_.data() + thread * 2 * S;
        kernels::GdnArgs k{};
        k.S = S;
        k.state = op.state.f32() + ((int64_t)op.state_slots[s] * HV + j) * S * S;
        k.qn = qn;
        k.kn = qn + S;
        k.scale = (float)(1.0 / std::sqrt((double)S));
        for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
          const float* col = op.qkv.f32() + t * W;
          l2_normalise(col + m * S, S, op.eps, qn);
          l2_normalise(col + (HK + m) * S, S, op.eps, qn + S);
          k.v = col + (2 * HK + j) * S;
          k.decay = (float)std::exp(softplus((double)alpha[t * HV + j] + op.dt_bias[j]) * op.a[j]);
          k.beta = (float)(1.0 / (1.0 + std::exp(-(double)beta[t * HV + j])));
          k.y = op.y.f32() + (t * HV + j) * S;
          kernels_.gdn_token(k);
        }
      });
}

}  // namespace sy::cpu_onednn
