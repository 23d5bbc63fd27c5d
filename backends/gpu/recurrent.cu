// The 1.5 recurrences, tokens in order with the state in registers: Mamba-2's scan (a warp per
// channel, lanes over d_state, as ssm_scan) and the gated delta rule (a warp per few columns of a
// head's state, lanes over its rows). A column of the delta rule needs only its own values and the
// token's normalised q and k, which each warp computes itself: no block-wide sync, and a head's
// columns spread over several blocks.
#include <type_traits>

#include "device_common.cuh"
#include "dispatch.h"
#include "gpu_backend.h"

namespace sy::gpu {
namespace {

constexpr int kMaxState = 256;  // ssm_scan2's d_state, gated_delta_net's head size
constexpr int kScanWarps = 4;   // channels per ssm_scan2 block
constexpr int kGdnCols = 4;     // state columns per gated_delta_net warp
constexpr int kGdnWarps = 4;

// Calls f(std::integral_constant<int, P>) with P, the values each lane holds, the smallest power
// of two with P * SY_WARP >= n (n <= kMaxState): small states do not pay for the largest.
template <class F>
void with_per_lane(int64_t n, F&& f) {
  const int64_t per = (n + SY_WARP - 1) / SY_WARP;
  if (per <= 1)
    f(std::integral_constant<int, 1>{});
  else if (per <= 2)
    f(std::integral_constant<int, 2>{});
  else if (per <= 4)
    f(std::integral_constant<int, 4>{});
  else
    f(std::integral_constant<int, kMaxState / SY_WARP>{});
}

// grid (ceil(D / kScanWarps), n_seqs): a warp per channel i (head i / head_dim), lane values
// n = lane + j * SY_WARP of its d_state states.
template <int kPer>
__global__ void ssm_scan2_kernel(const float* xbc, const float* dt, const float* dt_bias,
                                 const float* a, const float* d, const float* z, float* state,
                                 float* y, const uint32_t* seq_start, const int32_t* slots,
                                 int64_t d_inner, int n_head, int head_dim, int n_group,
                                 int d_state) {
  const int lane = threadIdx.x % SY_WARP;
  const int64_t i = (int64_t)blockIdx.x * kScanWarps + threadIdx.x / SY_WARP;
  if (i >= d_inner) return;  // the whole warp
  const int s = blockIdx.y;
  const int h = (int)(i / head_dim), g = h / (n_head / n_group);
  const int64_t width = d_inner + 2 * (int64_t)n_group * d_state;
  float* st = state + ((int64_t)slots[s] * d_inner + i) * d_state;
  float sr[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int n = lane + j * SY_WARP;
    sr[j] = n < d_state ? st[n] : 0.0f;
  }
  const float ah = a[h], bias = dt_bias ? dt_bias[h] : 0.0f;
  for (uint32_t t = seq_start[s]; t < seq_start[s + 1]; ++t) {
    const float* col = xbc + t * width;
    const float* b = col + d_inner + (int64_t)g * d_state;
    const float* c = col + d_inner + (int64_t)(n_group + g) * d_state;
    const float delta = softplus(dt[(int64_t)t * n_head + h] + bias);
    const float decay = expf(delta * ah);
    const float x = col[i], xdt = x * delta;
    float part = 0.0f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int n = lane + j * SY_WARP;
      if (n < d_state) {
        sr[j] = sr[j] * decay + b[n] * xdt;
        part += sr[j] * c[n];
      }
    }
    float out = warp_sum(part);
    if (d) out += d[h] * x;
    if (z) out *= silu(z[t * d_inner + i]);
    if (lane == 0) y[t * d_inner + i] = out;
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    if (lane + j * SY_WARP < d_state) st[lane + j * SY_WARP] = sr[j];
}

// grid (ceil(S / (kGdnWarps * kGdnCols)), n_v_head, n_seqs): a warp per kGdnCols columns c of
// value head j's state M (element (i, c) at c * S + i), lane values i = lane + r * SY_WARP.
template <int kPer>
__global__ void gated_delta_net_kernel(const float* qkv, const float* alpha, const float* beta,
                                       const float* dt_bias, const float* a, float* state, float* y,
                                       const uint32_t* seq_start, const int32_t* slots, int S,
                                       int n_k_head, int n_v_head, bool blocked, float eps) {
  const int lane = threadIdx.x % SY_WARP;
  const int c0 = (blockIdx.x * kGdnWarps + threadIdx.x / SY_WARP) * kGdnCols;
  if (c0 >= S) return;  // the whole warp
  const int j = blockIdx.y, s = blockIdx.z;
  const int m = blocked ? j / (n_v_head / n_k_head) : j % n_k_head;
  const int64_t width = (int64_t)(2 * n_k_head + n_v_head) * S;
  float* M = state + ((int64_t)slots[s] * n_v_head + j) * S * S;
  float mr[kGdnCols][kPer];
#pragma unroll
  for (int cc = 0; cc < kGdnCols; ++cc)
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int c = c0 + cc, i = lane + r * SY_WARP;
      mr[cc][r] = c < S && i < S ? M[(int64_t)c * S + i] : 0.0f;
    }
  const float bias = dt_bias[j], aj = a[j], out_scale = 1.0f / sqrtf((float)S);
  for (uint32_t t = seq_start[s]; t < seq_start[s + 1]; ++t) {
    const float* col = qkv + t * width;
    const float* q = col + (int64_t)m * S;
    const float* k = col + (int64_t)(n_k_head + m) * S;
    const float* v = col + (int64_t)(2 * n_k_head + j) * S;
    float qr[kPer], kr[kPer], qss = 0.0f, kss = 0.0f;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int i = lane + r * SY_WARP;
      qr[r] = i < S ? q[i] : 0.0f;
      kr[r] = i < S ? k[i] : 0.0f;
      qss += qr[r] * qr[r];
      kss += kr[r] * kr[r];
    }
    const float qinv = 1.0f / fmaxf(sqrtf(warp_sum(qss)), eps);
    const float kinv = 1.0f / fmaxf(sqrtf(warp_sum(kss)), eps);
#pragma unroll
    for (int r = 0; r < kPer; ++r) qr[r] *= qinv, kr[r] *= kinv;
    const int64_t hv = (int64_t)t * n_v_head + j;
    const float decay = expf(softplus(alpha[hv] + bias) * aj);
    const float b = 1.0f / (1.0f + expf(-beta[hv]));
#pragma unroll
    for (int cc = 0; cc < kGdnCols; ++cc) {
      const int c = c0 + cc;
      if (c >= S) break;  // the same for the whole warp
      float dot = 0.0f;
#pragma unroll
      for (int r = 0; r < kPer; ++r) {
        mr[cc][r] *= decay;
        dot += mr[cc][r] * kr[r];
      }
      const float u = b * (v[c] - warp_sum(dot));
      float o = 0.0f;
#pragma unroll
      for (int r = 0; r < kPer; ++r) {
        mr[cc][r] += kr[r] * u;
        o += mr[cc][r] * qr[r];
      }
      o = warp_sum(o);
      if (lane == 0) y[hv * S + c] = o * out_scale;
    }
  }
#pragma unroll
  for (int cc = 0; cc < kGdnCols; ++cc)
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int c = c0 + cc, i = lane + r * SY_WARP;
      if (c < S && i < S) M[(int64_t)c * S + i] = mr[cc][r];
    }
}

}  // namespace

void GpuBackend::ssm_scan2(const plugin::SsmScan2Op& op) {
  const int64_t d_inner = op.y.ne[0], d_state = op.d_state;
  need(d_state <= kMaxState, "ssm_scan2", "d_state", d_state, kMaxState);
  if (op.n_seqs == 0 || d_inner == 0) return;
  need(op.n_seqs <= 65535, "ssm_scan2", "sequences", op.n_seqs, 65535);
  begin_op({op.xbc.data, op.dt.data, op.dt_bias, op.a.data, op.d, op.z, op.state.data, op.y.data});
  meta_begin();
  const size_t st_at = meta_add(op.seq_token_start, (op.n_seqs + 1) * sizeof(uint32_t));
  const size_t sl_at = meta_add(op.state_slots, op.n_seqs * sizeof(int32_t));
  char* dev = meta_upload();
  const dim3 grid((unsigned)((d_inner + kScanWarps - 1) / kScanWarps), op.n_seqs);
  with_per_lane(d_state, [&](auto per) {
    SY_LAUNCH(ssm_scan2_kernel<decltype(per)::value>, grid, kScanWarps * SY_WARP, compute_,
              op.xbc.f32(), op.dt.f32(), op.dt_bias, op.a.f32(), op.d, op.z, op.state.f32(),
              op.y.f32(), reinterpret_cast<const uint32_t*>(dev + st_at),
              reinterpret_cast<const int32_t*>(dev + sl_at), d_inner, (int)op.n_head,
              (int)(d_inner / op.n_head), (int)op.n_group, (int)d_state);
  });
  launched("ssm_scan2");
}

void GpuBackend::gated_delta_net(const plugin::GatedDeltaNetOp& op) {
  const int64_t S = op.head_dim;
  need(S <= kMaxState, "gated_delta_net", "head size", S, kMaxState);
  if (op.n_seqs == 0) return;
  need(op.n_seqs <= 65535, "gated_delta_net", "sequences", op.n_seqs, 65535);
  need(op.n_v_head <= 65535, "gated_delta_net", "value heads", op.n_v_head, 65535);
  begin_op({op.qkv.data, op.alpha.data, op.beta.data, op.dt_bias, op.a, op.state.data, op.y.data});
  meta_begin();
  const size_t st_at = meta_add(op.seq_token_start, (op.n_seqs + 1) * sizeof(uint32_t));
  const size_t sl_at = meta_add(op.state_slots, op.n_seqs * sizeof(int32_t));
  char* dev = meta_upload();
  constexpr int kColsPerBlock = kGdnWarps * kGdnCols;
  const dim3 grid((unsigned)((S + kColsPerBlock - 1) / kColsPerBlock), (unsigned)op.n_v_head,
                  op.n_seqs);
  with_per_lane(S, [&](auto per) {
    SY_LAUNCH(gated_delta_net_kernel<decltype(per)::value>, grid, kGdnWarps * SY_WARP, compute_,
              op.qkv.f32(), op.alpha.f32(), op.beta.f32(), op.dt_bias, op.a, op.state.f32(),
              op.y.f32(), reinterpret_cast<const uint32_t*>(dev + st_at),
              reinterpret_cast<const int32_t*>(dev + sl_at), (int)S, (int)op.n_k_head,
              (int)op.n_v_head, op.head_map == SY_GDN_HEADS_BLOCKED, op.eps);
  });
  launched("gated_delta_net");
}

}  // namespace sy::gpu
