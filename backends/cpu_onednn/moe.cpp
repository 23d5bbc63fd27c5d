// MoE router (softmax or sigmoid, with a selection bias), grouped expert matmul and weighted
// combine. The grouped matmul buckets the batch's (token, slot) pairs by expert, gathers each
// expert's input rows and runs the dense matmul path on that expert's matrix (at its stride, so
// a fused gate_up tensor's halves need no copy), so decode reads only the selected experts'
// weights and prefill gets one GEMM per expert; the bias and scale apply as its rows are
// scattered back.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "onednn_backend.h"
#include "vec_math.h"

namespace sy::cpu_onednn {
namespace {

constexpr int64_t kParallelMinValues = 1 << 15;

}  // namespace

// Double precision like cpu_ref: equal scores must select equal experts on both backends.
void OnednnBackend::moe_gate(const plugin::MoeGateOp& op) {
  const int64_t E = op.logits.ne[0], k = op.ids.ne[0], T = op.logits.ne[1];
  const bool sigmoid = op.gating == SY_MOE_GATING_SIGMOID;
  pool_.parallel_for(T, T * E >= kParallelMinValues ? 1 : T, [&](int64_t t0, int64_t t1, int) {
    std::vector<double> p((size_t)E), choose((size_t)E);
    std::vector<char> taken((size_t)E);
    for (int64_t t = t0; t < t1; ++t) {
      const float* l = op.logits.f32() + t * E;
      if (sigmoid) {
        for (int64_t e = 0; e < E; ++e) p[e] = 1.0 / (1.0 + std::exp(-(double)l[e]));
      } else {
        double mx = l[0], sum = 0.0;
        for (int64_t e = 1; e < E; ++e) mx = std::max(mx, (double)l[e]);
        for (int64_t e = 0; e < E; ++e) sum += p[e] = std::exp((double)l[e] - mx);
        for (int64_t e = 0; e < E; ++e) p[e] /= sum;
      }
      // The bias only chooses; the weights are the unbiased p.
      for (int64_t e = 0; e < E; ++e)
        choose[e] = p[e] + (op.selection_bias ? op.selection_bias[e] : 0.0);
      std::fill(taken.begin(), taken.end(), 0);
      int32_t* ids = static_cast<int32_t*>(op.ids.data) + t * k;
      float* w = op.weights.f32() + t * k;
      double wsum = 0.0;
      // k selection passes; a strict > keeps the lower id on ties.
      for (int64_t j = 0; j < k; ++j) {
        int32_t best = -1;
        for (int64_t e = 0; e < E; ++e)
          if (!taken[e] && (best < 0 || choose[e] > choose[best])) best = (int32_t)e;
        taken[best] = 1;
        ids[j] = best;
        wsum += p[best];
      }
      const double norm = op.normalize ? std::max(wsum, 6.103515625e-5) : 1.0;
      for (int64_t j = 0; j < k; ++j) w[j] = (float)(p[ids[j]] / norm * op.scale);
    }
  });
}

void OnednnBackend::moe_matmul(const plugin::MoeMatmulOp& op) {
  const int64_t K = op.w.ne[0], N = op.w.ne[1], n_expert = op.w.ne[2];
  const int64_t k = op.ids.ne[0], T = op.ids.ne[1], xs = op.x.ne[1];
  const int32_t* ids = static_cast<const int32_t*>(op.ids.data);
  // Counting sort of the k*T uses by expert.
  std::vector<int64_t> start(n_expert + 1, 0);
  for (int64_t i = 0; i < k * T; ++i) ++start[ids[i] + 1];
  for (int64_t e = 0; e < n_expert; ++e) start[e + 1] += start[e];
  moe_rows_.resize((size_t)(k * T));
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < k * T; ++i) moe_rows_[fill[ids[i]]++] = i;
  for (int64_t e = 0; e < n_expert; ++e) {
    const int64_t m = start[e + 1] - start[e];
    if (m == 0) continue;
    const int64_t* rows = moe_rows_.data() + start[e];
    moe_x_.resize((size_t)(m * K));
    moe_y_.resize((size_t)(m * N));
    for_each(m, m * K >= kParallelMinValues, [&](int64_t r) {
      const int64_t t = rows[r] / k, j = rows[r] % k;
      std::memcpy(&moe_x_[r * K], op.x.f32() + (t * xs + (xs == 1 ? 0 : j)) * K,
                  (size_t)K * sizeof(float));
    });
    Tensor x, w, y;
    x.dtype = y.dtype = SY_DTYPE_F32;
    x.data = moe_x_.data();
    x.ne[0] = K, x.ne[1] = m;
    w.dtype = op.w.dtype;
    w.data = const_cast<uint8_t*>(op.w.bytes()) + e * (int64_t)op.expert_stride;
    w.ne[0] = K, w.ne[1] = N;
    y.data = moe_y_.data();
    y.ne[0] = N, y.ne[1] = m;
    matmul(x, w, y);
    flush();  // moe_x_ and moe_y_ are reused by the next expert
    const float* bias = op.bias ? op.bias + e * N : nullptr;
    for_each(m, m * N >= kParallelMinValues, [&](int64_t r) {
      float* dst = op.y.f32() + rows[r] * N;
      const float* src = &moe_y_[r * N];
      if (!bias && !op.scale) {
        std::memcpy(dst, src, (size_t)N * sizeof(float));
        return;
      }
      // The epilogue in F32, each step rounded as ggml's add_id then mul.
      const float sc = op.scale ? op.scale[e] : 1.0f;
      for (int64_t n = 0; n < N; ++n) dst[n] = (src[n] + (bias ? bias[n] : 0.0f)) * sc;
    });
  }
}

void OnednnBackend::moe_combine(const Tensor& x, const Tensor& weights, const Tensor& y) {
  const int64_t N = x.ne[0], k = x.ne[1], T = x.ne[2];
  for_each(T, N * k * T >= kParallelMinValues, [&](int64_t t) {
    float* out = y.f32() + t * N;
    const float* w = weights.f32() + t * k;
    int64_t n = 0;
    for (; n + 8 <= N; n += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t j = 0; j < k; ++j)  // slot order, as the contract says
        acc = _mm256_fmadd_ps(_mm256_set1_ps(w[j]), _mm256_loadu_ps(x.f32() + (t * k + j) * N + n),
                              acc);
      _mm256_storeu_ps(out + n, acc);
    }
    for (; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t j = 0; j < k; ++j) acc += w[j] * x.f32()[(t * k + j) * N + n];
      out[n] = acc;
    }
  });
}

}  // namespace sy::cpu_onednn
