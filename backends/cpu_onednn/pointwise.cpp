// rms_norm, norm, rope, rope_ext, bias_scale, add, mul, swiglu, unary and softmax: AVX2 over a
// row, the pool over rows when there are enough. Every loop reads an element before writing the
// same index, so y == x is safe.
#include <algorithm>
#include <cmath>

#include "onednn_backend.h"
#include "switchyard/sdk/rope_angles.h"
#include "vec_math.h"

namespace sy::cpu_onednn {
namespace {

constexpr int64_t kParallelMinValues = 1 << 16;

// sum of x[i]^2 over a row: two vector accumulators, then the scalar tail.
float sum_squares(const float* xr, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(xr + i), b = _mm256_loadu_ps(xr + i + 8);
    acc0 = _mm256_fmadd_ps(a, a, acc0);
    acc1 = _mm256_fmadd_ps(b, b, acc1);
  }
  float ss = hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) ss += xr[i] * xr[i];
  return ss;
}

}  // namespace

void OnednnBackend::rms_norm(const Tensor& x, const Tensor& w, float eps, const Tensor& y) {
  const int64_t n = x.ne[0], rows = x.rows();
  const float* wp = w.f32();
  for_each(rows, rows * n >= kParallelMinValues, [&](int64_t r) {
    const float* xr = x.f32() + r * n;
    float* yr = y.f32() + r * n;
    const float inv = 1.0f / std::sqrt(sum_squares(xr, n) / (float)n + eps);
    const __m256 vinv = _mm256_set1_ps(inv);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), vinv),
                                             _mm256_loadu_ps(wp + i)));
    for (; i < n; ++i) yr[i] = xr[i] * inv * wp[i];
  });
}

// RMS or L2 per row, then the row's column of w (row r takes column r mod groups).
void OnednnBackend::norm(const plugin::NormOp& op) {
  const int64_t n = op.x.ne[0], rows = op.x.rows();
  const bool rms = op.kind == SY_NORM_RMS;
  for_each(rows, rows * n >= kParallelMinValues, [&](int64_t r) {
    const float* xr = op.x.f32() + r * n;
    float* yr = op.y.f32() + r * n;
    const float ss = sum_squares(xr, n);
    const float inv =
        rms ? 1.0f / std::sqrt(ss / (float)n + op.eps) : 1.0f / std::fmax(std::sqrt(ss), op.eps);
    const __m256 vinv = _mm256_set1_ps(inv);
    int64_t i = 0;
    if (op.w) {
      const float* wr = op.w + (r % op.groups) * n;
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), vinv),
                                               _mm256_loadu_ps(wr + i)));
      for (; i < n; ++i) yr[i] = xr[i] * inv * wr[i];
    } else {
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_loadu_ps(xr + i), vinv));
      for (; i < n; ++i) yr[i] = xr[i] * inv;
    }
  });
}

// Rotates every head of every token by its token's cos/sin table cs ({2 * half} per token).
void OnednnBackend::rotate(const Tensor& x, const float* cs, int64_t half, bool neox) {
  const int64_t head_dim = x.ne[0], n_head = x.ne[1], n_tokens = x.ne[2];
  for_each(n_tokens * n_head, x.nelements() >= kParallelMinValues, [&](int64_t th) {
    float* v = x.f32() + th * head_dim;
    const float* c = cs + 2 * (th / n_head) * half;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
      const float a = v[i0], b = v[i1];
      v[i0] = a * c[2 * i] - b * c[2 * i + 1];
      v[i1] = a * c[2 * i + 1] + b * c[2 * i];
    }
  });
}

void OnednnBackend::rope(const Tensor& x, const int32_t* pos, uint32_t n_rot, float freq_base,
                         float freq_scale, uint32_t mode) {
  const int64_t n_tokens = x.ne[2];
  const int64_t half = n_rot / 2;
  // cos/sin per (token, pair), shared by all heads; theta in double because positions reach
  // thousands of radians, where an F32 angle is off by 1e-4.
  scratch_.resize((size_t)(2 * n_tokens * half));
  float* cs = scratch_.data();
  for_each(n_tokens, n_tokens * half >= 4096, [&](int64_t t) {
    for (int64_t i = 0; i < half; ++i) {
      const double theta = (double)pos[t] * freq_scale *
                           std::pow((double)freq_base, -2.0 * (double)i / (double)n_rot);
      cs[2 * (t * half + i)] = (float)std::cos(theta);
      cs[2 * (t * half + i) + 1] = (float)std::sin(theta);
    }
  });
  rotate(x, cs, half, mode == SY_ROPE_NEOX);
}

void OnednnBackend::rope_ext(const plugin::RopeExtOp& op) {
  const int64_t n_tokens = op.x.ne[2];
  const int64_t half = op.n_rot / 2;
  // ggml's F32 recipe (rope_angles.h): the angle table llama.cpp computes, per token.
  scratch_.resize((size_t)(2 * n_tokens * half));
  float* cs = scratch_.data();
  const plugin::YarnRamp ramp(op);
  for_each(n_tokens, n_tokens * half >= 4096,
           [&](int64_t t) { plugin::rope_ext_angles(op, ramp, op.pos[t], cs + 2 * t * half); });
  rotate(op.x, cs, half, op.mode == SY_ROPE_NEOX);
}

void OnednnBackend::bias_scale(const plugin::BiasScaleOp& op) {
  const int64_t n = op.x.ne[0], rows = op.x.rows();
  const float s = op.scale;
  for_each(rows, rows * n >= kParallelMinValues, [&](int64_t r) {
    const float* xr = op.x.f32() + r * n;
    float* yr = op.y.f32() + r * n;
    if (!op.bias) {
      for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * s;
    } else if (op.bias_first) {
      for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] + op.bias[i]) * s;
    } else {
      for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * s + op.bias[i];
    }
  });
}

void OnednnBackend::add(const Tensor& a, const Tensor& b, const Tensor& y) {
  const int64_t n = a.nelements();
  const float *pa = a.f32(), *pb = b.f32();
  float* py = y.f32();
  pool_.parallel_for(n, n >= kParallelMinValues ? 4096 : n, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) py[i] = pa[i] + pb[i];
  });
}

// b is a's shape, or one value per row of a.
void OnednnBackend::mul(const Tensor& a, const Tensor& b, const Tensor& y) {
  const int64_t n = a.ne[0], rows = a.rows();
  const float *pa = a.f32(), *pb = b.f32();
  float* py = y.f32();
  if (b.ne[0] == n) {
    pool_.parallel_for(rows * n, rows * n >= kParallelMinValues ? 4096 : rows * n,
                       [&](int64_t i0, int64_t i1, int) {
                         int64_t i = i0;
                         for (; i + 8 <= i1; i += 8)
                           _mm256_storeu_ps(py + i, _mm256_mul_ps(_mm256_loadu_ps(pa + i),
                                                                  _mm256_loadu_ps(pb + i)));
                         for (; i < i1; ++i) py[i] = pa[i] * pb[i];
                       });
    return;
  }
  for_each(rows, rows * n >= kParallelMinValues, [&](int64_t r) {
    const float s = pb[r];
    const __m256 vs = _mm256_set1_ps(s);
    const float* ar = pa + r * n;
    float* yr = py + r * n;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_loadu_ps(ar + i), vs));
    for (; i < n; ++i) yr[i] = ar[i] * s;
  });
}

void OnednnBackend::unary(const plugin::UnaryOp& op) {
  const int64_t n = op.x.nelements();
  const float* px = op.x.f32();
  float* py = op.y.f32();
  const uint32_t kind = op.kind;
  pool_.parallel_for(n, n >= kParallelMinValues ? 4096 : n, [&](int64_t i0, int64_t i1, int) {
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps(),
                 c2 = _mm256_set1_ps(2.0f * 0.7978845608f), a = _mm256_set1_ps(0.044715f);
    int64_t i = i0;
    for (; i + 8 <= i1; i += 8) {
      const __m256 v = _mm256_loadu_ps(px + i);
      __m256 r;
      if (kind == SY_UNARY_SIGMOID) {  // 1 / (1 + e^-v): e^-v = inf below -88.7 gives 0
        r = _mm256_div_ps(one, _mm256_add_ps(one, exp_ps(_mm256_sub_ps(zero, v))));
      } else if (kind == SY_UNARY_GELU) {  // v/2 (1 + tanh(u)) = v / (1 + e^-2u), u = c (v + a v^3)
        const __m256 u2 =
            _mm256_mul_ps(c2, _mm256_fmadd_ps(_mm256_mul_ps(a, v), _mm256_mul_ps(v, v), v));
        r = _mm256_div_ps(v, _mm256_add_ps(one, exp_ps(_mm256_sub_ps(zero, u2))));
      } else if (kind == SY_UNARY_TANH) {
        r = tanh_ps(v);
      } else {
        r = _mm256_max_ps(v, zero);
        r = _mm256_mul_ps(r, r);
      }
      _mm256_storeu_ps(py + i, r);
    }
    for (; i < i1; ++i) {
      const float v = px[i], r = std::fmax(v, 0.0f);
      switch (kind) {
        case SY_UNARY_SIGMOID:
          py[i] = 1.0f / (1.0f + std::exp(-v));
          break;
        case SY_UNARY_GELU:
          py[i] = v / (1.0f + std::exp(-2.0f * 0.7978845608f * (v + 0.044715f * v * v * v)));
          break;
        case SY_UNARY_TANH:
          py[i] = std::tanh(v);
          break;
        default:
          py[i] = r * r;
      }
    }
  });
}

void OnednnBackend::swiglu_oai(const plugin::SwigluOaiOp& op) {
  const int64_t n = op.g.nelements();
  const float *pg = op.g.f32(), *pu = op.u.f32();
  float* py = op.y.f32();
  const float alpha = op.alpha, limit = op.limit;
  pool_.parallel_for(n, n >= kParallelMinValues ? 4096 : n, [&](int64_t i0, int64_t i1, int) {
    const __m256 one = _mm256_set1_ps(1.0f), na = _mm256_set1_ps(-alpha),
                 hi = _mm256_set1_ps(limit), lo = _mm256_set1_ps(-limit);
    int64_t i = i0;
    for (; i + 8 <= i1; i += 8) {
      const __m256 x = _mm256_min_ps(_mm256_loadu_ps(pg + i), hi);
      const __m256 u = _mm256_max_ps(_mm256_min_ps(_mm256_loadu_ps(pu + i), hi), lo);
      const __m256 glu = _mm256_div_ps(x, _mm256_add_ps(one, exp_ps(_mm256_mul_ps(na, x))));
      _mm256_storeu_ps(py + i, _mm256_mul_ps(glu, _mm256_add_ps(u, one)));
    }
    for (; i < i1; ++i) {
      const float x = std::min(pg[i], limit), u = std::clamp(pu[i], -limit, limit);
      py[i] = x / (1.0f + std::exp(-alpha * x)) * (u + 1.0f);
    }
  });
}

void OnednnBackend::swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) {
  const int64_t n = gate.nelements();
  const float *g = gate.f32(), *u = up.f32();
  float* py = y.f32();
  const int64_t chunks = n / 8;
  for_each(chunks, n >= kParallelMinValues, [&](int64_t c) {
    const __m256 gv = _mm256_loadu_ps(g + 8 * c);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), gv));
    const __m256 silu = _mm256_div_ps(gv, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    _mm256_storeu_ps(py + 8 * c, _mm256_mul_ps(silu, _mm256_loadu_ps(u + 8 * c)));
  });
  for (int64_t i = chunks * 8; i < n; ++i) py[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

void OnednnBackend::softmax(const Tensor& x, const Tensor& y) {
  const int64_t n = x.ne[0], rows = x.rows();
  for_each(rows, rows * n >= kParallelMinValues, [&](int64_t r) {
    const float* xr = x.f32() + r * n;
    float* yr = y.f32() + r * n;
    int64_t i = 0;
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(xr + i));
    float mx = hmax(vmax);
    for (; i < n; ++i) mx = std::fmax(mx, xr[i]);
    // Subtracting the row's max keeps every exponent <= 0: no overflow for large inputs.
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 vsum = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
      const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vm));
      vsum = _mm256_add_ps(vsum, e);
      _mm256_storeu_ps(yr + i, e);
    }
    float sum = hsum(vsum);
    for (; i < n; ++i) sum += yr[i] = std::exp(xr[i] - mx);
    const float inv = 1.0f / sum;
    for (i = 0; i < n; ++i) yr[i] *= inv;
  });
}

}  // namespace sy::cpu_onednn
