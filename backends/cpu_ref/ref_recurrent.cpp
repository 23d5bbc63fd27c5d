// The 1.5 recurrences as plain loops in double: Mamba-2's scan (a scalar decay per head, B and C
// per group) and the gated delta rule. States are stored as F32 after every token, so a chunk
// computed in one call equals the same tokens one at a time.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ref_backend.h"
#include "ref_math.h"

namespace sy::cpu_ref {
void RefBackend::ssm_scan2(const plugin::SsmScan2Op& op) {
  const int64_t D = op.y.ne[0], H = op.n_head, S = op.d_state, P = D / H;
  const int64_t W = op.xbc.ne[0], heads_per_group = H / op.n_group;
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    float* state = op.state.f32() + (int64_t)op.state_slots[s] * S * D;
    for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
      const float* x = op.xbc.f32() + t * W;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t g = h / heads_per_group;
        const float* b = x + D + g * S;
        const float* c = x + D + op.n_group * S + g * S;
        const double delta =
            softplus((double)op.dt.f32()[t * H + h] + (op.dt_bias ? op.dt_bias[h] : 0.0));
        const double decay = std::exp(delta * op.a.f32()[h]);
        for (int64_t p = 0; p < P; ++p) {
          const int64_t i = h * P + p;
          const double xdt = (double)x[i] * delta;
          double y = 0.0;
          for (int64_t n = 0; n < S; ++n) {
            float& sn = state[i * S + n];
            sn = (float)(sn * decay + b[n] * xdt);
            y += (double)sn * c[n];
          }
          if (op.d) y += (double)op.d[h] * x[i];
          if (op.z) y *= silu(op.z[t * D + i]);
          op.y.f32()[t * D + i] = (float)y;
        }
      }
    }
  }
}

void RefBackend::gated_delta_net(const plugin::GatedDeltaNetOp& op) {
  const int64_t S = op.head_dim, HK = op.n_k_head, HV = op.n_v_head, W = op.qkv.ne[0];
  const int64_t ratio = HV / HK;
  std::vector<double> qn(S), kn(S), u(S);
  // v / max(|v|, eps), as ggml_l2_norm.
  auto l2 = [&](const float* v, std::vector<double>& out) {
    double ss = 0.0;
    for (int64_t i = 0; i < S; ++i) ss += (double)v[i] * v[i];
    const double inv = 1.0 / std::max(std::sqrt(ss), (double)op.eps);
    for (int64_t i = 0; i < S; ++i) out[i] = v[i] * inv;
  };
  const double out_scale = 1.0 / std::sqrt((double)S);
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    float* state = op.state.f32() + (int64_t)op.state_slots[s] * S * S * HV;
    for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
      const float* col = op.qkv.f32() + t * W;
      for (int64_t j = 0; j < HV; ++j) {
        const int64_t m = op.head_map == SY_GDN_HEADS_MODULO ? j % HK : j / ratio;
        l2(col + m * S, qn);
        l2(col + (HK + m) * S, kn);
        const float* v = col + 2 * HK * S + j * S;
        const double g = softplus((double)op.alpha.f32()[t * HV + j] + op.dt_bias[j]) * op.a[j];
        const double decay = std::exp(g);
        const double b = sigmoid(op.beta.f32()[t * HV + j]);
        float* M = state + j * S * S;  // element (i, c) at c * S + i
        for (int64_t c = 0; c < S; ++c) {
          double dot = 0.0;
          for (int64_t i = 0; i < S; ++i) {
            M[c * S + i] = (float)(M[c * S + i] * decay);
            dot += (double)M[c * S + i] * kn[i];
          }
          u[c] = b * ((double)v[c] - dot);
        }
        float* y = op.y.f32() + (t * HV + j) * S;
        for (int64_t c = 0; c < S; ++c) {
          double dot = 0.0;
          for (int64_t i = 0; i < S; ++i) {
            M[c * S + i] = (float)(M[c * S + i] + kn[i] * u[c]);
            dot += (double)M[c * S + i] * qn[i];
          }
          y[c] = (float)(dot * out_scale);
        }
      }
    }
  }
}

}  // namespace sy::cpu_ref
