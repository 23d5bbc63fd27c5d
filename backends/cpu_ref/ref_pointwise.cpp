// rms_norm, norm, rope, add, mul, swiglu, unary and softmax, computed in double; rope_ext and
// bias_scale in F32, as llama.cpp computes them (their recipe is part of the op). Each reads an
// element before writing the same element, so the allowed aliasing (y == x) is safe.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "ref_backend.h"
#include "ref_math.h"
#include "switchyard/sdk/rope_angles.h"

namespace sy::cpu_ref {

void RefBackend::rms_norm(const Tensor& x, const Tensor& w, float eps, const Tensor& y) {
  const int64_t n = x.ne[0];
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* xr = x.f32() + r * n;
    float* yr = y.f32() + r * n;
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i) ss += (double)xr[i] * xr[i];
    const double inv = 1.0 / std::sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] = (float)(xr[i] * inv * w.f32()[i]);
  }
}

void RefBackend::rope(const Tensor& x, const int32_t* pos, uint32_t n_rot, float freq_base,
                      float freq_scale, uint32_t mode) {
  const int64_t head_dim = x.ne[0], n_head = x.ne[1], n_tokens = x.ne[2];
  const int64_t half = n_rot / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t h = 0; h < n_head; ++h) {
      float* v = x.f32() + (t * n_head + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const double theta = (double)pos[t] * freq_scale *
                             std::pow((double)freq_base, -2.0 * (double)i / (double)n_rot);
        // NORM pairs adjacent values; NEOX pairs value i with value i + n_rot/2.
        const int64_t i0 = mode == SY_ROPE_NEOX ? i : 2 * i;
        const int64_t i1 = mode == SY_ROPE_NEOX ? i + half : 2 * i + 1;
        const double a = v[i0], b = v[i1];
        v[i0] = (float)(a * std::cos(theta) - b * std::sin(theta));
        v[i1] = (float)(a * std::sin(theta) + b * std::cos(theta));
      }
    }
  }
}

void RefBackend::rope_ext(const plugin::RopeExtOp& op) {
  const int64_t head_dim = op.x.ne[0], n_head = op.x.ne[1], n_tokens = op.x.ne[2];
  const int64_t half = op.n_rot / 2;
  const plugin::YarnRamp ramp(op);
  std::vector<float> cs(2 * half);
  for (int64_t t = 0; t < n_tokens; ++t) {
    plugin::rope_ext_angles(op, ramp, op.pos[t], cs.data());
    for (int64_t h = 0; h < n_head; ++h) {
      float* v = op.x.f32() + (t * n_head + h) * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t i0 = op.mode == SY_ROPE_NEOX ? i : 2 * i;
        const int64_t i1 = op.mode == SY_ROPE_NEOX ? i + half : 2 * i + 1;
        const float a = v[i0], b = v[i1], c = cs[2 * i], s = cs[2 * i + 1];
        v[i0] = a * c - b * s;
        v[i1] = a * s + b * c;
      }
    }
  }
}

void RefBackend::bias_scale(const plugin::BiasScaleOp& op) {
  const int64_t n = op.x.ne[0];
  for (int64_t r = 0; r < op.x.rows(); ++r)
    for (int64_t i = 0; i < n; ++i) {
      const float x = op.x.f32()[r * n + i], b = op.bias ? op.bias[i] : 0.0f;
      op.y.f32()[r * n + i] = op.bias_first ? (x + b) * op.scale : x * op.scale + b;
    }
}

void RefBackend::add(const Tensor& a, const Tensor& b, const Tensor& y) {
  for (int64_t i = 0; i < a.nelements(); ++i)
    y.f32()[i] = (float)((double)a.f32()[i] + (double)b.f32()[i]);
}

void RefBackend::swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) {
  for (int64_t i = 0; i < gate.nelements(); ++i) {
    const double g = gate.f32()[i];
    y.f32()[i] = (float)(silu(g) * up.f32()[i]);
  }
}

void RefBackend::softmax(const Tensor& x, const Tensor& y) {
  const int64_t n = x.ne[0];
  std::vector<double> e(n);
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* xr = x.f32() + r * n;
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, xr[i]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += e[i] = std::exp((double)xr[i] - mx);
    for (int64_t i = 0; i < n; ++i) y.f32()[r * n + i] = (float)(e[i] / sum);
  }
}

void RefBackend::norm(const plugin::NormOp& op) {
  const int64_t n = op.x.ne[0];
  for (int64_t r = 0; r < op.x.rows(); ++r) {
    const float* xr = op.x.f32() + r * n;
    float* yr = op.y.f32() + r * n;
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i) ss += (double)xr[i] * xr[i];
    const double inv = op.kind == SY_NORM_RMS ? 1.0 / std::sqrt(ss / (double)n + op.eps)
                                              : 1.0 / std::fmax(std::sqrt(ss), (double)op.eps);
    const float* w = op.w ? op.w + (r % op.groups) * n : nullptr;
    for (int64_t i = 0; i < n; ++i) yr[i] = (float)(xr[i] * inv * (w ? (double)w[i] : 1.0));
  }
}

void RefBackend::mul(const Tensor& a, const Tensor& b, const Tensor& y) {
  const int64_t n = a.ne[0], bn = b.ne[0];  // bn == 1: one value per row of a
  for (int64_t r = 0; r < a.rows(); ++r)
    for (int64_t i = 0; i < n; ++i)
      y.f32()[r * n + i] = a.f32()[r * n + i] * b.f32()[r * bn + (bn == 1 ? 0 : i)];
}

namespace {

double unary_of(uint32_t kind, double x) {
  switch (kind) {
    case SY_UNARY_SIGMOID:
      return sigmoid(x);
    case SY_UNARY_GELU:  // the tanh approximation: x/2 (1 + tanh(u)) = x sigmoid(2u), no
                         // cancellation
      return x * sigmoid(2.0 * std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x));
    case SY_UNARY_TANH:
      return std::tanh(x);
    default: {
      const double r = std::fmax(x, 0.0);
      return r * r;
    }
  }
}

}  // namespace

void RefBackend::unary(const plugin::UnaryOp& op) {
  for (int64_t i = 0; i < op.x.nelements(); ++i)
    op.y.f32()[i] = (float)unary_of(op.kind, op.x.f32()[i]);
}

void RefBackend::swiglu_oai(const plugin::SwigluOaiOp& op) {
  for (int64_t i = 0; i < op.g.nelements(); ++i) {
    const double x = std::fmin((double)op.g.f32()[i], (double)op.limit);
    const double u = std::clamp((double)op.u.f32()[i], -(double)op.limit, (double)op.limit);
    op.y.f32()[i] = (float)(x * sigmoid(op.alpha * x) * (u + 1.0));
  }
}

}  // namespace sy::cpu_ref
