// Mamba's causal conv1d and selective scan. conv: 8 channels per AVX2 vector with the K-1
// previous inputs held in registers; scan: one channel per OpenMP iteration, its d_state
// values per vector. Both parallelise over (sequence, channel) so small decode batches still
// spread over the cores.
#include <algorithm>
#include <cmath>

#include "onednn_backend.h"
#include "vec_math.h"

namespace sy::cpu_onednn {
namespace {

constexpr int64_t kParallelMinValues = 1 << 14;
constexpr int64_t kMaxVecKernel = 16;  // wider kernels take the scalar path

inline __m256 silu_ps(__m256 v) {
  const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), v));
  return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
inline float silu(float v) {
  return v / (1.0f + std::exp(-v));
}

// ln(x) for positive normal x, Cephes logf: about 1 ulp.
inline __m256 log_ps(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256i xi = _mm256_castps_si256(x);
  const __m256i e = _mm256_srli_epi32(xi, 23);
  xi = _mm256_or_si256(_mm256_and_si256(xi, _mm256_set1_epi32(0x007fffff)),
                       _mm256_set1_epi32(0x3f000000));
  __m256 m = _mm256_castsi256_ps(xi);  // x = m * 2^ef, m in [0.5, 1)
  __m256 ef = _mm256_cvtepi32_ps(_mm256_sub_epi32(e, _mm256_set1_epi32(126)));
  const __m256 small = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
  const __m256 keep = _mm256_and_ps(m, small);
  m = _mm256_sub_ps(m, one);
  ef = _mm256_sub_ps(ef, _mm256_and_ps(one, small));
  m = _mm256_add_ps(m, keep);  // now ln(x) = ln(1 + m) + ef * ln2, m in [-0.29, 0.41]
  const __m256 z = _mm256_mul_ps(m, m);
  __m256 y = _mm256_set1_ps(7.0376836292e-2f);
  for (float k : {-1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                  -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f})
    y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(k));
  y = _mm256_mul_ps(_mm256_mul_ps(y, m), z);
  y = _mm256_fmadd_ps(ef, _mm256_set1_ps(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(_mm256_set1_ps(0.5f), z, y);
  return _mm256_fmadd_ps(ef, _mm256_set1_ps(0.693359375f), _mm256_add_ps(m, y));
}

// softplus(v) = v > 20 ? v : log1p(exp(v)), as max(v, 0) + log1p(exp(-|v|)) so the log1p
// argument w is in (0, 1]; log1p(w) = ln(1 + w) * w / ((1 + w) - 1) keeps its precision
// (Goldberg's trick), and is w itself once 1 + w rounds to 1.
inline __m256 softplus_ps(__m256 v) {
  const __m256 absv = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
  const __m256 w = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), absv));
  const __m256 u = _mm256_add_ps(_mm256_set1_ps(1.0f), w);
  const __m256 d = _mm256_sub_ps(u, _mm256_set1_ps(1.0f));
  const __m256 exact = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_EQ_OQ);
  const __m256 lp = _mm256_blendv_ps(_mm256_div_ps(_mm256_mul_ps(log_ps(u), w), d), w, exact);
  const __m256 r = _mm256_add_ps(_mm256_max_ps(v, _mm256_setzero_ps()), lp);
  return _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, _mm256_set1_ps(20.0f), _CMP_GT_OQ));
}

// [sum(a[0]), ..., sum(a[7])]
inline __m256 hsum8(const __m256 a[8]) {
  const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}
inline float softplus(float v) {
  return v > 20.0f ? v : std::log1p(std::exp(v));
}

// One channel over a chunk of n tokens (x and y strided by C); the scalar tail and fallback.
void conv_channel(const plugin::SsmConvOp& op, int64_t c, int64_t t0, int64_t n, float* state) {
  const int64_t C = op.x.ne[0], K = op.weight.ne[0];
  const float* w = op.weight.f32() + c * K;
  float* st = state + c * (K - 1);  // the window's first K-1 values, oldest first
  for (int64_t t = 0; t < n; ++t) {
    const float xin = op.x.f32()[(t0 + t) * C + c];
    float acc = op.bias ? op.bias[c] : 0.0f;
    for (int64_t k = 0; k < K - 1; ++k) acc += w[k] * st[k];
    acc += w[K - 1] * xin;
    for (int64_t k = 0; k + 1 < K - 1; ++k) st[k] = st[k + 1];  // shift the window left
    if (K > 1) st[K - 2] = xin;
    op.y.f32()[(t0 + t) * C + c] = op.apply_silu ? silu(acc) : acc;
  }
}

// Channels [c0, c0 + 8) over a chunk: the window lives in registers, the state is read once
// and written once.
void conv_block8(const plugin::SsmConvOp& op, int64_t c0, int64_t t0, int64_t n, float* state) {
  const int64_t C = op.x.ne[0], K = op.weight.ne[0];
  __m256 wv[kMaxVecKernel], win[kMaxVecKernel];
  alignas(32) float tmp[8];
  for (int64_t k = 0; k < K; ++k) {
    for (int l = 0; l < 8; ++l) tmp[l] = op.weight.f32()[(c0 + l) * K + k];
    wv[k] = _mm256_load_ps(tmp);
  }
  for (int64_t k = 0; k < K - 1; ++k) {
    for (int l = 0; l < 8; ++l) tmp[l] = state[(c0 + l) * (K - 1) + k];
    win[k] = _mm256_load_ps(tmp);
  }
  const __m256 bias = op.bias ? _mm256_loadu_ps(op.bias + c0) : _mm256_setzero_ps();
  for (int64_t t = 0; t < n; ++t) {
    const __m256 xin = _mm256_loadu_ps(op.x.f32() + (t0 + t) * C + c0);
    __m256 acc = bias;
    for (int64_t k = 0; k < K - 1; ++k) acc = _mm256_fmadd_ps(wv[k], win[k], acc);
    acc = _mm256_fmadd_ps(wv[K - 1], xin, acc);
    for (int64_t k = 0; k + 1 < K - 1; ++k) win[k] = win[k + 1];
    if (K > 1) win[K - 2] = xin;
    _mm256_storeu_ps(op.y.f32() + (t0 + t) * C + c0, op.apply_silu ? silu_ps(acc) : acc);
  }
  for (int64_t k = 0; k < K - 1; ++k) {
    _mm256_store_ps(tmp, win[k]);
    for (int l = 0; l < 8; ++l) state[(c0 + l) * (K - 1) + k] = tmp[l];
  }
}

}  // namespace

void OnednnBackend::ssm_conv(const plugin::SsmConvOp& op) {
  const int64_t C = op.x.ne[0], K = op.weight.ne[0];
  const int64_t blocks = (C + 7) / 8, work = (int64_t)op.n_seqs * blocks;
  const bool vec = K <= kMaxVecKernel;
  for_each(work, op.x.nelements() * K >= kParallelMinValues, [&](int64_t w) {
    const int64_t s = w / blocks, c0 = (w % blocks) * 8;
    const int64_t t0 = op.seq_token_start[s], n = op.seq_token_start[s + 1] - t0;
    float* state = op.state.f32() + (int64_t)op.state_slots[s] * (K - 1) * C;
    if (vec && c0 + 8 <= C) {
      conv_block8(op, c0, t0, n, state);
    } else {
      for (int64_t c = c0; c < std::min(C, c0 + 8); ++c) conv_channel(op, c, t0, n, state);
    }
  });
}

namespace {

// One channel's recurrence for one token over d_state values (S % 8 == 0):
// h = exp(delta A) h + du B; returns the lanes of C * h (summed by the caller).
inline __m256 scan_channel(float* h, const float* a, const float* b, const float* c, int64_t S,
                           __m256 vdelta, __m256 vdu) {
  __m256 yacc = _mm256_setzero_ps();
  for (int64_t n = 0; n < S; n += 8) {
    const __m256 da = exp_ps(_mm256_mul_ps(vdelta, _mm256_loadu_ps(a + n)));
    const __m256 hv =
        _mm256_fmadd_ps(da, _mm256_loadu_ps(h + n), _mm256_mul_ps(vdu, _mm256_loadu_ps(b + n)));
    _mm256_storeu_ps(h + n, hv);
    yacc = _mm256_fmadd_ps(hv, _mm256_loadu_ps(c + n), yacc);
  }
  return yacc;
}

// The scalar path: channel tails and d_state not a multiple of 8.
void scan_scalar(const plugin::SsmScanOp& op, float* state, int64_t i, uint32_t t) {
  const int64_t D = op.u.ne[0], S = op.a.ne[0];
  float* h = state + i * S;
  const float* a = op.a.f32() + i * S;
  const float* b = op.b.f32() + t * S;
  const float* c = op.c.f32() + t * S;
  const float u = op.u.f32()[t * D + i];
  const float delta = softplus(op.dt.f32()[t * D + i] + (op.dt_bias ? op.dt_bias[i] : 0.0f));
  float y = 0.0f;
  for (int64_t n = 0; n < S; ++n) {
    h[n] = std::exp(delta * a[n]) * h[n] + delta * u * b[n];
    y += h[n] * c[n];
  }
  if (op.d) y += op.d[i] * u;
  if (op.z) y *= silu(op.z[t * D + i]);
  op.y.f32()[t * D + i] = y;
}

}  // namespace

// Blocks of 8 channels walk the chunk token by token: their inputs are one vector per token,
// softplus, the D skip and the z gate are vector ops, and their 8 x d_state state stays in L1
// across the chunk (a channel at a time would stride through u, dt, z and y by d_inner floats).
void OnednnBackend::ssm_scan(const plugin::SsmScanOp& op) {
  const int64_t D = op.u.ne[0], S = op.a.ne[0];
  const int64_t blocks = (D + 7) / 8, work = (int64_t)op.n_seqs * blocks;
  for_each(work, op.u.nelements() * S >= kParallelMinValues, [&](int64_t w) {
    const int64_t s = w / blocks, i0 = (w % blocks) * 8;
    float* state = op.state.f32() + (int64_t)op.state_slots[s] * D * S;
    const uint32_t t0 = op.seq_token_start[s], t1 = op.seq_token_start[s + 1];
    if (i0 + 8 > D || S % 8 != 0) {
      for (uint32_t t = t0; t < t1; ++t)
        for (int64_t i = i0; i < std::min(D, i0 + 8); ++i) scan_scalar(op, state, i, t);
      return;
    }
    const __m256 bias = op.dt_bias ? _mm256_loadu_ps(op.dt_bias + i0) : _mm256_setzero_ps();
    const __m256 dskip = op.d ? _mm256_loadu_ps(op.d + i0) : _mm256_setzero_ps();
    // Locals, so the stores into the state do not force reloads of the op's fields.
    const float *pu = op.u.f32(), *pdt = op.dt.f32(), *pb = op.b.f32(), *pc = op.c.f32(),
                *pz = op.z;
    const float* a = op.a.f32() + i0 * S;
    float* h = state + i0 * S;
    float* py = op.y.f32();
    alignas(32) float dl[8], dul[8];
    __m256 acc[8];
    for (uint32_t t = t0; t < t1; ++t) {
      const __m256 u = _mm256_loadu_ps(pu + t * D + i0);
      const __m256 delta = softplus_ps(_mm256_add_ps(_mm256_loadu_ps(pdt + t * D + i0), bias));
      _mm256_store_ps(dl, delta);
      _mm256_store_ps(dul, _mm256_mul_ps(delta, u));
      for (int l = 0; l < 8; ++l)
        acc[l] = scan_channel(h + l * S, a + l * S, pb + t * S, pc + t * S, S,
                              _mm256_set1_ps(dl[l]), _mm256_set1_ps(dul[l]));
      __m256 y = _mm256_fmadd_ps(dskip, u, hsum8(acc));
      if (pz) y = _mm256_mul_ps(y, silu_ps(_mm256_loadu_ps(pz + t * D + i0)));
      _mm256_storeu_ps(py + t * D + i0, y);
    }
  });
}

}  // namespace sy::cpu_onednn
