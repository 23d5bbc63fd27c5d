// rms_norm, norm, rope, rope_ext, bias_scale, add, mul, swiglu, unary and softmax. Each thread
// reads an element before it writes that same element, so the aliasing the ABI allows (y == x)
// is safe.
#include "device_common.cuh"
#include "dispatch.h"
#include "gpu_backend.h"
#include "switchyard/sdk/rope_angles.h"

namespace sy::gpu {
namespace {

// One block per row.
__global__ void rms_norm_kernel(const float* x, const float* w, float eps, float* y, int64_t n) {
  const float* xr = x + (int64_t)blockIdx.x * n;
  float* yr = y + (int64_t)blockIdx.x * n;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
  ss = block_reduce<false>(ss);
  const float inv = 1.0f / sqrtf(ss / (float)n + eps);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * inv * w[i];
}

// One block per row r0 + blockIdx.x: RMS or L2 norm, then (x * scale) * w's column r mod groups.
__global__ void norm_kernel(const float* x, const float* w, int64_t groups, bool l2, float eps,
                            float* y, int64_t n, int64_t r0) {
  const int64_t r = r0 + blockIdx.x;
  const float* xr = x + r * n;
  float* yr = y + r * n;
  const float* wr = w ? w + (r % groups) * n : nullptr;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
  ss = block_reduce<false>(ss);
  const float inv = l2 ? 1.0f / fmaxf(sqrtf(ss), eps) : 1.0f / sqrtf(ss / (float)n + eps);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    yr[i] = wr ? xr[i] * inv * wr[i] : xr[i] * inv;
}

// One thread per rotated pair. theta in double: positions reach the thousands, where a float
// angle is off by more than the op's tolerance.
__global__ void rope_kernel(float* x, const int32_t* pos, int64_t n_tokens, int64_t n_head,
                            int64_t head_dim, int n_rot, double freq_base, double freq_scale,
                            bool neox) {
  const int half = n_rot / 2;
  const int64_t total = n_tokens * n_head * half;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int i = (int)(e % half);
    const int64_t head = e / half;  // token * n_head + h
    const int64_t t = head / n_head;
    float* v = x + head * head_dim;
    const double theta = (double)pos[t] * freq_scale * pow(freq_base, -2.0 * i / n_rot);
    const double c = cos(theta), s = sin(theta);
    const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
    const double a = v[i0], b = v[i1];
    v[i0] = (float)(a * c - b * s);
    v[i1] = (float)(a * s + b * c);
  }
}

// What rope_ext_kernel needs beyond the tensors: the host computes the per-call constants once.
struct RopeExtConsts {
  float theta_scale, freq_scale, ext_factor, attn_factor, yarn_mscale, ramp_lo, ramp_hi;
  int n_rot;
  bool neox;
};

// One thread per rotated pair, theta in F32 in ggml's order (backend.h): the running product of
// theta_scale up to the pair, divided by its frequency factor, then the YaRN mix.
__global__ void rope_ext_kernel(float* x, const int32_t* pos, const float* freq_factors,
                                int64_t n_tokens, int64_t n_head, int64_t head_dim,
                                RopeExtConsts k) {
  const int half = k.n_rot / 2;
  const int64_t total = n_tokens * n_head * half;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int i = (int)(e % half);
    const int64_t head = e / half;  // token * n_head + h
    float theta = (float)pos[head / n_head];
    for (int j = 0; j < i; ++j) theta *= k.theta_scale;
    const float extrap = theta / (freq_factors ? freq_factors[i] : 1.0f);
    float th = k.freq_scale * extrap;
    float mscale = k.attn_factor;
    if (k.ext_factor != 0.0f) {
      const float y = ((float)i - k.ramp_lo) / fmaxf(0.001f, k.ramp_hi - k.ramp_lo);
      const float mix = (1 - fminf(1.0f, fmaxf(0.0f, y))) * k.ext_factor;
      th = th * (1 - mix) + extrap * mix;
      mscale *= k.yarn_mscale;
    }
    const float c = cosf(th) * mscale, s = sinf(th) * mscale;
    float* v = x + head * head_dim;
    const int i0 = k.neox ? i : 2 * i, i1 = k.neox ? i + half : 2 * i + 1;
    const float a = v[i0], b = v[i1];
    v[i0] = a * c - b * s;
    v[i1] = a * s + b * c;
  }
}

// y = x * scale + bias or (x + bias) * scale, bias per column (n values).
__global__ void bias_scale_kernel(const float* x, const float* bias, float scale, bool bias_first,
                                  float* y, int64_t n, int64_t total) {
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const float b = bias ? bias[e % n] : 0.0f;
    y[e] = bias_first ? (x[e] + b) * scale : x[e] * scale + b;
  }
}

__global__ void add_kernel(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = a[i] + b[i];
}

// b_row 1: b has one value per row of n; else b is a's shape.
__global__ void mul_kernel(const float* a, const float* b, float* y, int64_t n, int64_t total,
                           bool b_row) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = a[i] * b[b_row ? i / n : i];
}

__global__ void unary_kernel(const float* x, float* y, int64_t total, uint32_t kind) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i], r = fmaxf(v, 0.0f);
    switch (kind) {
      case SY_UNARY_SIGMOID:
        y[i] = 1.0f / (1.0f + expf(-v));
        break;
      case SY_UNARY_GELU:  // the tanh approximation: v/2 (1 + tanh(u)) = v / (1 + e^-2u)
        y[i] = v / (1.0f + expf(-2.0f * 0.7978845608f * (v + 0.044715f * v * v * v)));
        break;
      case SY_UNARY_TANH:
        y[i] = tanhf(v);
        break;
      default:
        y[i] = r * r;
    }
  }
}

// gpt-oss's clamped SwiGLU: min(g, limit) gated by its sigmoid, times clamp(u) + 1.
__global__ void swiglu_oai_kernel(const float* g, const float* u, float* y, int64_t n,
                                  float alpha, float limit) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float x = fminf(g[i], limit), up = fmaxf(fminf(u[i], limit), -limit);
    y[i] = x / (1.0f + expf(-alpha * x)) * (up + 1.0f);
  }
}

__global__ void swiglu_kernel(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float g = gate[i];
    y[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

// One block per row: max, then the sum of exponentials, then the normalised values.
__global__ void softmax_kernel(const float* x, float* y, int64_t n) {
  const float* xr = x + (int64_t)blockIdx.x * n;
  float* yr = y + (int64_t)blockIdx.x * n;
  float mx = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = fmaxf(mx, xr[i]);
  mx = block_reduce<true>(mx);
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += expf(xr[i] - mx);
  sum = block_reduce<false>(sum);
  const float inv = 1.0f / sum;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = expf(xr[i] - mx) * inv;
}

// Rows per launch: grid.x is capped at 65535 here for every vendor.
constexpr int64_t kMaxRowBlocks = 65535;

}  // namespace

void GpuBackend::rms_norm(const Tensor& x, const Tensor& w, float eps, const Tensor& y) {
  const int64_t n = x.ne[0], rows = x.rows();
  if (rows == 0 || n == 0) return;
  begin_op({x.data, w.data, y.data});
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxRowBlocks) {
    const unsigned blocks = (unsigned)std::min(kMaxRowBlocks, rows - r0);
    SY_LAUNCH(rms_norm_kernel, blocks, kThreads, compute_, x.f32() + r0 * n, w.f32(), eps,
              y.f32() + r0 * n, n);
  }
  launched("rms_norm");
}

void GpuBackend::norm(const plugin::NormOp& op) {
  const int64_t n = op.x.ne[0], rows = op.x.rows();
  if (rows == 0 || n == 0) return;
  begin_op({op.x.data, op.w, op.y.data});
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxRowBlocks) {
    const unsigned blocks = (unsigned)std::min(kMaxRowBlocks, rows - r0);
    SY_LAUNCH(norm_kernel, blocks, kThreads, compute_, op.x.f32(), op.w, op.groups,
              op.kind == SY_NORM_L2, op.eps, op.y.f32(), n, r0);
  }
  launched("norm");
}

void GpuBackend::rope(const Tensor& x, const int32_t* pos, uint32_t n_rot, float freq_base,
                      float freq_scale, uint32_t mode) {
  const int64_t head_dim = x.ne[0], n_head = x.ne[1], n_tokens = x.ne[2];
  if (n_tokens == 0 || n_head == 0) return;
  begin_op({x.data});
  meta_begin();
  const size_t pos_at = meta_add(pos, n_tokens * sizeof(int32_t));
  const int32_t* d_pos = reinterpret_cast<const int32_t*>(meta_upload() + pos_at);
  SY_LAUNCH(rope_kernel, grid_for(n_tokens * n_head * (n_rot / 2)), kThreads, compute_, x.f32(),
            d_pos, n_tokens, n_head, head_dim, (int)n_rot, (double)freq_base, (double)freq_scale,
            mode == SY_ROPE_NEOX);
  launched("rope");
}

void GpuBackend::rope_ext(const plugin::RopeExtOp& op) {
  const int64_t head_dim = op.x.ne[0], n_head = op.x.ne[1], n_tokens = op.x.ne[2];
  if (n_tokens == 0 || n_head == 0) return;
  begin_op({op.x.data, op.freq_factors});
  meta_begin();
  const size_t pos_at = meta_add(op.pos, n_tokens * sizeof(int32_t));
  const int32_t* d_pos = reinterpret_cast<const int32_t*>(meta_upload() + pos_at);
  const plugin::YarnRamp ramp(op);
  RopeExtConsts k{};
  k.theta_scale = std::pow(op.freq_base, -2.0f / (float)op.n_rot);
  k.freq_scale = op.freq_scale;
  k.ext_factor = op.ext_factor;
  k.attn_factor = op.attn_factor;
  k.yarn_mscale = op.ext_factor != 0.0f ? 1.0f + 0.1f * std::log(1.0f / op.freq_scale) : 1.0f;
  k.ramp_lo = ramp.lo;
  k.ramp_hi = ramp.hi;
  k.n_rot = (int)op.n_rot;
  k.neox = op.mode == SY_ROPE_NEOX;
  SY_LAUNCH(rope_ext_kernel, grid_for(n_tokens * n_head * (op.n_rot / 2)), kThreads, compute_,
            op.x.f32(), d_pos, op.freq_factors, n_tokens, n_head, head_dim, k);
  launched("rope_ext");
}

void GpuBackend::bias_scale(const plugin::BiasScaleOp& op) {
  const int64_t n = op.x.nelements();
  if (n == 0) return;
  begin_op({op.x.data, op.bias, op.y.data});
  SY_LAUNCH(bias_scale_kernel, grid_for(n), kThreads, compute_, op.x.f32(), op.bias, op.scale,
            op.bias_first, op.y.f32(), op.x.ne[0], n);
  launched("bias_scale");
}

void GpuBackend::add(const Tensor& a, const Tensor& b, const Tensor& y) {
  const int64_t n = a.nelements();
  if (n == 0) return;
  begin_op({a.data, b.data, y.data});
  SY_LAUNCH(add_kernel, grid_for(n), kThreads, compute_, a.f32(), b.f32(), y.f32(), n);
  launched("add");
}

void GpuBackend::mul(const Tensor& a, const Tensor& b, const Tensor& y) {
  const int64_t n = a.nelements();
  if (n == 0) return;
  begin_op({a.data, b.data, y.data});
  SY_LAUNCH(mul_kernel, grid_for(n), kThreads, compute_, a.f32(), b.f32(), y.f32(), a.ne[0], n,
            b.ne[0] != a.ne[0]);
  launched("mul");
}

void GpuBackend::swiglu_oai(const plugin::SwigluOaiOp& op) {
  const int64_t n = op.g.nelements();
  if (n == 0) return;
  begin_op({op.g.data, op.u.data, op.y.data});
  SY_LAUNCH(swiglu_oai_kernel, grid_for(n), kThreads, compute_, op.g.f32(), op.u.f32(), op.y.f32(),
            n, op.alpha, op.limit);
  launched("swiglu_oai");
}

void GpuBackend::unary(const plugin::UnaryOp& op) {
  const int64_t n = op.x.nelements();
  if (n == 0) return;
  begin_op({op.x.data, op.y.data});
  SY_LAUNCH(unary_kernel, grid_for(n), kThreads, compute_, op.x.f32(), op.y.f32(), n,
            op.kind);
  launched("unary");
}

void GpuBackend::swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) {
  const int64_t n = gate.nelements();
  if (n == 0) return;
  begin_op({gate.data, up.data, y.data});
  SY_LAUNCH(swiglu_kernel, grid_for(n), kThreads, compute_, gate.f32(), up.f32(), y.f32(), n);
  launched("swiglu");
}

void GpuBackend::softmax(const Tensor& x, const Tensor& y) {
  const int64_t n = x.ne[0], rows = x.rows();
  if (rows == 0 || n == 0) return;
  begin_op({x.data, y.data});
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxRowBlocks) {
    const unsigned blocks = (unsigned)std::min(kMaxRowBlocks, rows - r0);
    SY_LAUNCH(softmax_kernel, blocks, kThreads, compute_, x.f32() + r0 * n, y.f32() + r0 * n, n);
  }
  launched("softmax");
}

}  // namespace sy::gpu
