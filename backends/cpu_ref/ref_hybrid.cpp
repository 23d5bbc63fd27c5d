// The 1.1 hybrid ops as plain loops in double: causal conv1d and the S6 scan with per-slot
// state, the MoE router (softmax or sigmoid, with the 1.5 selection bias), grouped expert matmul
// (with the 1.5 stride and epilogue) and the weighted combine. States are stored as F32 after
// every token, so a chunk computed in one call equals the same tokens one at a time.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ref_backend.h"
#include "ref_math.h"
#include "switchyard/common/dtype.h"

namespace sy::cpu_ref {
void RefBackend::ssm_conv(const plugin::SsmConvOp& op) {
  const int64_t C = op.x.ne[0], K = op.weight.ne[0];
  const float* w = op.weight.f32();
  std::vector<double> win;
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    const uint32_t t0 = op.seq_token_start[s], t1 = op.seq_token_start[s + 1];
    float* state = op.state.f32() + (int64_t)op.state_slots[s] * (K - 1) * C;
    for (int64_t c = 0; c < C; ++c) {
      // The window over time: the K-1 stored inputs, then this chunk's inputs.
      win.assign(state + c * (K - 1), state + (c + 1) * (K - 1));
      for (uint32_t t = t0; t < t1; ++t) win.push_back(op.x.f32()[t * C + c]);
      for (uint32_t t = t0; t < t1; ++t) {
        double acc = op.bias ? op.bias[c] : 0.0;
        for (int64_t k = 0; k < K; ++k) acc += (double)w[c * K + k] * win[(t - t0) + k];
        op.y.f32()[t * C + c] = (float)(op.apply_silu ? silu(acc) : acc);
      }
      for (int64_t k = 0; k < K - 1; ++k)
        state[c * (K - 1) + k] = (float)win[win.size() - (K - 1) + k];
    }
  }
}

void RefBackend::ssm_scan(const plugin::SsmScanOp& op) {
  const int64_t D = op.u.ne[0], S = op.a.ne[0];
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    float* h = op.state.f32() + (int64_t)op.state_slots[s] * S * D;
    for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
      const float* b = op.b.f32() + t * S;
      const float* c = op.c.f32() + t * S;
      for (int64_t i = 0; i < D; ++i) {
        const double u = op.u.f32()[t * D + i];
        const double delta =
            softplus((double)op.dt.f32()[t * D + i] + (op.dt_bias ? op.dt_bias[i] : 0.0));
        double y = 0.0;
        for (int64_t n = 0; n < S; ++n) {
          float& hn = h[i * S + n];
          hn = (float)(std::exp(delta * op.a.f32()[i * S + n]) * hn + delta * b[n] * u);
          y += (double)hn * c[n];
        }
        if (op.d) y += op.d[i] * u;
        if (op.z) y *= silu(op.z[t * D + i]);
        op.y.f32()[t * D + i] = (float)y;
      }
    }
  }
}

void RefBackend::moe_gate(const plugin::MoeGateOp& op) {
  const int64_t E = op.logits.ne[0], k = op.ids.ne[0];
  std::vector<double> p(E), choose(E);
  std::vector<int32_t> order(E);
  for (int64_t t = 0; t < op.logits.ne[1]; ++t) {
    const float* l = op.logits.f32() + t * E;
    if (op.gating == SY_MOE_GATING_SIGMOID) {
      for (int64_t e = 0; e < E; ++e) p[e] = sigmoid(l[e]);
    } else {
      const double mx = *std::max_element(l, l + E);
      double sum = 0.0;
      for (int64_t e = 0; e < E; ++e) sum += p[e] = std::exp((double)l[e] - mx);
      for (double& v : p) v /= sum;
    }
    // The selection bias only chooses; the weights are the unbiased probabilities.
    for (int64_t e = 0; e < E; ++e)
      choose[e] = p[e] + (op.selection_bias ? op.selection_bias[e] : 0.0);
    std::iota(order.begin(), order.end(), 0);
    // Stable: equal scores keep the lower expert id first.
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return choose[a] > choose[b]; });
    double wsum = 0.0;
    for (int64_t j = 0; j < k; ++j) wsum += p[order[j]];
    const double norm = op.normalize ? std::max(wsum, 6.103515625e-5) : 1.0;
    int32_t* ids = static_cast<int32_t*>(op.ids.data) + t * k;
    for (int64_t j = 0; j < k; ++j) {
      ids[j] = order[j];
      op.weights.f32()[t * k + j] = (float)(p[order[j]] / norm * op.scale);
    }
  }
}

void RefBackend::moe_matmul(const plugin::MoeMatmulOp& op) {
  const int64_t K = op.w.ne[0], N = op.w.ne[1], n_expert = op.w.ne[2];
  const int64_t k = op.ids.ne[0], T = op.ids.ne[1], xs = op.x.ne[1];
  const int64_t row_bytes = dtype::row_bytes(op.w.dtype, K);
  const int32_t* ids = static_cast<const int32_t*>(op.ids.data);
  std::vector<float> wrow(K);
  // Expert by expert so that each weight row is dequantised once per call.
  for (int64_t e = 0; e < n_expert; ++e) {
    std::vector<int64_t> uses;  // t * k + j
    for (int64_t i = 0; i < k * T; ++i)
      if (ids[i] == e) uses.push_back(i);
    if (uses.empty()) continue;
    const uint8_t* we = op.w.bytes() + e * (int64_t)op.expert_stride;
    for (int64_t n = 0; n < N; ++n) {
      dtype::row_to_f32(op.w.dtype, we + n * row_bytes, wrow.data(), K);
      for (int64_t i : uses) {
        const int64_t t = i / k, j = i % k;
        const float* x = op.x.f32() + (t * xs + (xs == 1 ? 0 : j)) * K;
        double acc = 0.0;
        for (int64_t c = 0; c < K; ++c) acc += (double)x[c] * wrow[c];
        // The epilogue in F32, as ggml's add_id and mul round each step.
        float v = (float)acc;
        if (op.bias) v += op.bias[e * N + n];
        if (op.scale) v *= op.scale[e];
        op.y.f32()[i * N + n] = v;
      }
    }
  }
}

void RefBackend::moe_combine(const Tensor& x, const Tensor& weights, const Tensor& y) {
  const int64_t N = x.ne[0], k = x.ne[1], T = x.ne[2];
  for (int64_t t = 0; t < T; ++t)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t j = 0; j < k; ++j)
        acc += (double)weights.f32()[t * k + j] * x.f32()[(t * k + j) * N + n];
      y.f32()[t * N + n] = (float)acc;
    }
}

}  // namespace sy::cpu_ref
