// The 1.1 hybrid ops: causal conv1d and the selective scan (a thread or a warp per channel,
// tokens in order, state in registers), the MoE router (a thread per token; softmax or sigmoid,
// with the 1.5 selection bias) and the grouped expert matmul (with the 1.5 expert stride and
// bias/scale epilogue): a GEMV per (token, slot) for decode-sized batches, else a routing pass
// that lists each expert's rows on the device and one tiled GEMM over all experts. No host sync.
#include "device_common.cuh"
#include "dispatch.h"
#include "gemm_tile.cuh"
#include "gpu_backend.h"

namespace sy::gpu {
namespace {

constexpr int kMaxConv = 16;    // d_conv
constexpr int kMaxState = 256;  // d_state
constexpr int kScanWarps = 4;   // channels per scan block
constexpr int kMaxExperts = 1024;
constexpr int kMoeGemvPairs = 16;  // up to this many (token, slot) pairs: one GEMV each
constexpr int kMoeGemvWarps = 4;

// grid (ceil(C / threads), n_seqs): one thread per (sequence, channel) slides the window.
__global__ void ssm_conv_kernel(const float* x, const float* w, const float* bias, float* state,
                                float* y, const uint32_t* seq_start, const int32_t* slots,
                                int64_t channels, int k, bool act) {
  const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const int s = blockIdx.y;
  float* st = state + ((int64_t)slots[s] * channels + c) * (k - 1);
  const float* wc = w + c * k;
  float win[kMaxConv];  // win[0..k-2]: previous inputs, win[k-1]: this token's
  for (int i = 0; i < k - 1; ++i) win[i] = st[i];
  for (uint32_t t = seq_start[s]; t < seq_start[s + 1]; ++t) {
    win[k - 1] = x[t * channels + c];
    float acc = bias ? bias[c] : 0.0f;
    for (int i = 0; i < k; ++i) acc += wc[i] * win[i];
    y[t * channels + c] = act ? silu(acc) : acc;
    for (int i = 0; i < k - 1; ++i) win[i] = win[i + 1];
  }
  for (int i = 0; i < k - 1; ++i) st[i] = win[i];
}

// grid (ceil(D / kScanWarps), n_seqs): a warp per channel, its lanes over the d_state states.
__global__ void ssm_scan_kernel(const float* u, const float* dt, const float* dt_bias,
                                const float* a, const float* b, const float* c, const float* d,
                                const float* z, float* state, float* y, const uint32_t* seq_start,
                                const int32_t* slots, int64_t d_inner, int d_state) {
  constexpr int kPer = kMaxState / SY_WARP;
  const int lane = threadIdx.x % SY_WARP;
  const int64_t i = (int64_t)blockIdx.x * kScanWarps + threadIdx.x / SY_WARP;
  if (i >= d_inner) return;  // the whole warp
  const int s = blockIdx.y;
  float* h = state + ((int64_t)slots[s] * d_inner + i) * d_state;
  float hr[kPer], ar[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int n = lane + j * SY_WARP;
    hr[j] = n < d_state ? h[n] : 0.0f;
    ar[j] = n < d_state ? a[i * d_state + n] : 0.0f;
  }
  for (uint32_t t = seq_start[s]; t < seq_start[s + 1]; ++t) {
    const float ut = u[t * d_inner + i];
    const float delta = softplus(dt[t * d_inner + i] + (dt_bias ? dt_bias[i] : 0.0f));
    float part = 0.0f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int n = lane + j * SY_WARP;
      if (n < d_state) {
        hr[j] = expf(delta * ar[j]) * hr[j] + delta * b[t * d_state + n] * ut;
        part += hr[j] * c[t * d_state + n];
      }
    }
    float out = warp_sum(part);
    if (d) out += d[i] * ut;
    if (z) out *= silu(z[t * d_inner + i]);
    if (lane == 0) y[t * d_inner + i] = out;
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    if (lane + j * SY_WARP < d_state) h[lane + j * SY_WARP] = hr[j];
}

// p of one expert: softmax (given the row's max and sum of exponentials) or sigmoid.
__device__ __forceinline__ float gate_prob(float l, bool sigmoid, float mx, float sum) {
  return sigmoid ? 1.0f / (1.0f + expf(-l)) : expf(l - mx) / sum;
}

// A thread per token: k passes picking the highest unpicked score, a strict > keeping the lower
// expert id first on ties. The score is the logit when there is no selection bias (softmax and
// sigmoid are monotonic, so the order is exact), else p + bias.
__global__ void moe_gate_kernel(const float* logits, const float* sel_bias, int32_t* ids,
                                float* weights, int64_t n_tokens, int n_expert, int k, bool sigmoid,
                                bool normalize, float scale) {
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n_tokens;
       t += (int64_t)gridDim.x * blockDim.x) {
    const float* l = logits + t * n_expert;
    float mx = -INFINITY, sum = 0.0f;
    if (!sigmoid) {
      for (int e = 0; e < n_expert; ++e) mx = fmaxf(mx, l[e]);
      for (int e = 0; e < n_expert; ++e) sum += expf(l[e] - mx);
    }
    uint32_t picked[kMaxExperts / 32];
    for (int w = 0; w < (n_expert + 31) / 32; ++w) picked[w] = 0;
    float wsum = 0.0f;
    for (int j = 0; j < k; ++j) {
      int best = -1;
      float best_score = 0.0f;
      for (int e = 0; e < n_expert; ++e) {
        if ((picked[e / 32] >> (e % 32)) & 1u) continue;
        const float score = sel_bias ? gate_prob(l[e], sigmoid, mx, sum) + sel_bias[e] : l[e];
        if (best < 0 || score > best_score) best = e, best_score = score;
      }
      picked[best / 32] |= 1u << (best % 32);
      const float p = gate_prob(l[best], sigmoid, mx, sum);
      ids[t * k + j] = best;
      weights[t * k + j] = p;
      wsum += p;
    }
    const float norm = normalize ? fmaxf(wsum, 6.103515625e-5f) : 1.0f;
    for (int j = 0; j < k; ++j) weights[t * k + j] = weights[t * k + j] / norm * scale;
  }
}

// The 1.5 epilogue of expert e's output j, in F32 and in ggml's order: (acc + bias) * scale.
__device__ __forceinline__ float expert_epilogue(float acc, const float* bias, const float* scale,
                                                 int e, int64_t n, int64_t j) {
  if (bias) acc += bias[(int64_t)e * n + j];
  if (scale) acc *= scale[e];
  return acc;
}

// Where an expert's weights are: expert e's matrix starts e * stride bytes after the first.
struct ExpertWeights {
  const uint8_t* w;
  int64_t stride, row_bytes;
  const float* bias;   // {N, n_expert}, or nullptr
  const float* scale;  // {n_expert}, or nullptr
  __device__ const uint8_t* row(int e, int64_t j) const {
    return w + (int64_t)e * stride + j * row_bytes;
  }
};

// grid (ceil(N / kMoeGemvWarps), pairs): a warp per output value of one (token, slot) pair.
template <int DT>
__global__ void moe_gemv_kernel(const float* x, ExpertWeights ew, const int32_t* ids, float* y,
                                int64_t k_dim, int64_t n, int n_expert, int k_slots, int x_slots) {
  const int lane = threadIdx.x % SY_WARP;
  const int64_t j = (int64_t)blockIdx.x * kMoeGemvWarps + threadIdx.x / SY_WARP;
  const int pair = blockIdx.y;
  const int e = ids[pair];
  if (j >= n || e < 0 || e >= n_expert) return;  // a bad id leaves its zeroed row
  const int t = pair / k_slots, slot = pair % k_slots;
  const float* xr = x + ((int64_t)t * x_slots + (x_slots == 1 ? 0 : slot)) * k_dim;
  const uint8_t* row = ew.row(e, j);
  float acc = 0.0f;
  for (int64_t c = lane; c < k_dim; c += SY_WARP) acc += load_w<DT>(row, c) * xr[c];
  acc = warp_sum(acc);
  if (lane == 0) y[(int64_t)pair * n + j] = expert_epilogue(acc, ew.bias, ew.scale, e, n, j);
}

// One thread per expert lists, in pair order, the (token, slot) pairs routed to it.
__global__ void moe_route_kernel(const int32_t* ids, int n_pairs, int n_expert, int32_t* rows,
                                 int32_t* counts) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n_expert) return;
  int n = 0;
  for (int i = 0; i < n_pairs; ++i)
    if (ids[i] == e) rows[(int64_t)e * n_pairs + n++] = i;
  counts[e] = n;
}

// Rows of expert blockIdx.z: gathered token inputs times its (dequantised) weight rows.
template <int DT>
struct ExpertRows {
  const float* xp;
  ExpertWeights ew;
  const int32_t* pairs;  // n_expert lists of n_pairs
  const int32_t* counts;
  float* yp;
  int n, k, n_pairs, k_slots, x_slots;
  __device__ int rows() const { return counts[blockIdx.z]; }
  __device__ int pair(int r) const { return pairs[(int64_t)blockIdx.z * n_pairs + r]; }
  __device__ float x(int r, int c) const {
    const int p = pair(r), t = p / k_slots, slot = p % k_slots;
    return xp[((int64_t)t * x_slots + (x_slots == 1 ? 0 : slot)) * k + c];
  }
  __device__ float w(int j, int c) const { return load_w<DT>(ew.row(blockIdx.z, j), c); }
  __device__ void store(int r, int j, float v) const {
    yp[(int64_t)pair(r) * n + j] = expert_epilogue(v, ew.bias, ew.scale, blockIdx.z, n, j);
  }
};

__global__ void moe_combine_kernel(const float* x, const float* weights, float* y, int64_t n, int k,
                                   int64_t n_tokens) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n * n_tokens;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t t = i / n, col = i % n;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j) acc += weights[t * k + j] * x[(t * k + j) * n + col];
    y[i] = acc;
  }
}

}  // namespace

void GpuBackend::ssm_conv(const plugin::SsmConvOp& op) {
  const int64_t channels = op.x.ne[0], k = op.weight.ne[0];
  need(k <= kMaxConv, "ssm_conv", "d_conv", k, kMaxConv);
  if (op.n_seqs == 0 || channels == 0) return;
  need(op.n_seqs <= 65535, "ssm_conv", "sequences", op.n_seqs, 65535);
  need(channels <= 65535 * kThreads, "ssm_conv", "channels", channels, 65535 * kThreads);
  begin_op({op.x.data, op.weight.data, op.bias, op.state.data, op.y.data});
  meta_begin();
  const size_t st_at = meta_add(op.seq_token_start, (op.n_seqs + 1) * sizeof(uint32_t));
  const size_t sl_at = meta_add(op.state_slots, op.n_seqs * sizeof(int32_t));
  char* dev = meta_upload();
  const dim3 grid((unsigned)((channels + kThreads - 1) / kThreads), op.n_seqs);
  SY_LAUNCH(ssm_conv_kernel, grid, kThreads, compute_, op.x.f32(), op.weight.f32(), op.bias,
            op.state.f32(), op.y.f32(), reinterpret_cast<const uint32_t*>(dev + st_at),
            reinterpret_cast<const int32_t*>(dev + sl_at), channels, (int)k, op.apply_silu);
  launched("ssm_conv");
}

void GpuBackend::ssm_scan(const plugin::SsmScanOp& op) {
  const int64_t d_inner = op.u.ne[0], d_state = op.a.ne[0];
  need(d_state <= kMaxState, "ssm_scan", "d_state", d_state, kMaxState);
  if (op.n_seqs == 0 || d_inner == 0) return;
  need(op.n_seqs <= 65535, "ssm_scan", "sequences", op.n_seqs, 65535);
  begin_op({op.u.data, op.dt.data, op.dt_bias, op.a.data, op.b.data, op.c.data, op.d, op.z,
            op.state.data, op.y.data});
  meta_begin();
  const size_t st_at = meta_add(op.seq_token_start, (op.n_seqs + 1) * sizeof(uint32_t));
  const size_t sl_at = meta_add(op.state_slots, op.n_seqs * sizeof(int32_t));
  char* dev = meta_upload();
  const dim3 grid((unsigned)((d_inner + kScanWarps - 1) / kScanWarps), op.n_seqs);
  SY_LAUNCH(ssm_scan_kernel, grid, kScanWarps * SY_WARP, compute_, op.u.f32(), op.dt.f32(),
            op.dt_bias, op.a.f32(), op.b.f32(), op.c.f32(), op.d, op.z, op.state.f32(), op.y.f32(),
            reinterpret_cast<const uint32_t*>(dev + st_at),
            reinterpret_cast<const int32_t*>(dev + sl_at), d_inner, (int)d_state);
  launched("ssm_scan");
}

void GpuBackend::moe_gate(const plugin::MoeGateOp& op) {
  const int64_t n_expert = op.logits.ne[0], n_tokens = op.logits.ne[1], k = op.ids.ne[0];
  need(n_expert <= kMaxExperts, "moe_gate", "n_expert", n_expert, kMaxExperts);
  if (n_tokens == 0) return;
  begin_op({op.logits.data, op.ids.data, op.weights.data, op.selection_bias});
  SY_LAUNCH(moe_gate_kernel, grid_for(n_tokens, 64), 64, compute_, op.logits.f32(),
            op.selection_bias, static_cast<int32_t*>(op.ids.data), op.weights.f32(), n_tokens,
            (int)n_expert, (int)k, op.gating == SY_MOE_GATING_SIGMOID, op.normalize, op.scale);
  launched("moe_gate");
}

void GpuBackend::moe_matmul(const plugin::MoeMatmulOp& op) {
  const int64_t k_dim = op.w.ne[0], n = op.w.ne[1], n_expert = op.w.ne[2];
  const int64_t k = op.ids.ne[0], n_tokens = op.ids.ne[1], x_slots = op.x.ne[1];
  const int64_t pairs = k * n_tokens, row_bytes = dtype::row_bytes(op.w.dtype, k_dim);
  if (pairs == 0 || n == 0) return;
  need(pairs <= 65535 * (int64_t)kTile, "moe_matmul", "token slots", pairs, 65535 * kTile);
  need(n_expert <= 65535, "moe_matmul", "n_expert", n_expert, 65535);
  // F32 weights are read as floats: each expert's matrix must start 4-byte aligned.
  if (op.w.dtype == SY_DTYPE_F32 && op.expert_stride % 4 != 0)
    throw plugin::Error(SY_ERR_UNSUPPORTED, "moe_matmul: expert_stride " +
                                                std::to_string(op.expert_stride) +
                                                " of F32 weights is not a multiple of 4");
  begin_op({op.x.data, op.w.data, op.ids.data, op.y.data, op.bias, op.scale});
  const ExpertWeights ew{op.w.bytes(), (int64_t)op.expert_stride, row_bytes, op.bias, op.scale};
  // Rows whose id is out of range stay zero (a device backend cannot check ids on the host).
  check(cudaMemsetAsync(op.y.data, 0, (size_t)(pairs * n * sizeof(float)), compute_),
        "moe_matmul: zero");
  const int32_t* ids = static_cast<const int32_t*>(op.ids.data);
  if (k_dim == 0 && !op.bias) return;  // empty sums: zero, times any scale
  if (pairs <= kMoeGemvPairs) {
    const dim3 grid((unsigned)((n + kMoeGemvWarps - 1) / kMoeGemvWarps), (unsigned)pairs);
    SY_WEIGHT_DTYPE_SWITCH(
        op.w.dtype, "moe_matmul",
        SY_LAUNCH(moe_gemv_kernel<DT>, grid, kMoeGemvWarps * SY_WARP, compute_, op.x.f32(), ew, ids,
                  op.y.f32(), k_dim, n, (int)n_expert, (int)k, (int)x_slots));
    launched("moe_matmul");
    return;
  }
  int32_t* lists = reinterpret_cast<int32_t*>(
      scratch_.get((size_t)(n_expert * pairs + n_expert) * sizeof(int32_t), compute_));
  int32_t* counts = lists + n_expert * pairs;
  SY_LAUNCH(moe_route_kernel, grid_for(n_expert, 64), 64, compute_, ids, (int)pairs, (int)n_expert,
            lists, counts);
  const dim3 grid((unsigned)((n + kTile - 1) / kTile), (unsigned)((pairs + kTile - 1) / kTile),
                  (unsigned)n_expert);
  SY_WEIGHT_DTYPE_SWITCH(
      op.w.dtype, "moe_matmul",
      const ExpertRows<DT> src{op.x.f32(), ew, lists, counts, op.y.f32(), (int)n, (int)k_dim,
                               (int)pairs, (int)k, (int)x_slots};
      SY_LAUNCH(gemm_tile_kernel<ExpertRows<DT>>, grid, kTileThreads, compute_, src));
  launched("moe_matmul");
}

void GpuBackend::moe_combine(const Tensor& x, const Tensor& weights, const Tensor& y) {
  const int64_t n = x.ne[0], k = x.ne[1], n_tokens = x.ne[2];
  if (n * n_tokens == 0) return;
  begin_op({x.data, weights.data, y.data});
  SY_LAUNCH(moe_combine_kernel, grid_for(n * n_tokens), kThreads, compute_, x.f32(), weights.f32(),
            y.f32(), n, (int)k, n_tokens);
  launched("moe_combine");
}

}  // namespace sy::gpu
