// An independent, obviously-correct llama forward pass straight from a GGUF file (dequantised
// weights, double accumulation, no cache): the reference the model runtime is checked against.
// It follows llama.cpp's llama graph with its optional tensors: q/k/v/output biases added after
// the `.scale` multiplier, FFN biases added before it, a fused attn_qkv, rope_freqs factors, and
// linear or YaRN RoPE scaling (the YaRN paper's ramp and magnitude, written independently of
// ggml's F32 recipe).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "naive_attention.h"
#include "switchyard/common/dtype.h"

namespace sy::test {

class NaiveLlama {
 public:
  explicit NaiveLlama(const gguf::File& f) : f_(f) {
    E = int(*f.get_uint("llama.embedding_length"));
    L = int(*f.get_uint("llama.block_count"));
    F = int(*f.get_uint("llama.feed_forward_length"));
    H = int(*f.get_uint("llama.attention.head_count"));
    HK = int(*f.get_uint("llama.attention.head_count_kv"));
    D = int(f.get_uint("llama.attention.key_length").value_or(E / H));
    eps = *f.get_float("llama.attention.layer_norm_rms_epsilon");
    base = f.get_float("llama.rope.freq_base").value_or(10000.0);
    V = int(f.find_tensor("token_embd.weight")->ne[1]);
    const std::string type = f.get_string("llama.rope.scaling.type").value_or("linear");
    const double factor = f.get_float("llama.rope.scaling.factor").value_or(0.0);
    scale_factor = type == "none" || factor == 0 ? 1.0 : factor;
    yarn = type == "yarn";
    n_ctx_orig = double(f.get_uint("llama.rope.scaling.original_context_length")
                            .value_or(*f.get_uint("llama.context_length")));
    magnitude = f.get_float("llama.rope.scaling.attn_factor").value_or(1.0);
    if (yarn && scale_factor > 1) magnitude *= 0.1 * std::log(scale_factor) + 1.0;
    if (f.find_tensor("rope_freqs.weight")) freq_factors = vec("rope_freqs.weight");
  }

  // Logits for every position of `tokens` (row t = after token t).
  std::vector<std::vector<double>> logits(const std::vector<int>& tokens) const {
    const int T = int(tokens.size());
    const auto emb = mat("token_embd.weight");
    std::vector<std::vector<double>> x(T);
    for (int t = 0; t < T; ++t) x[t] = emb[tokens[t]];
    for (int l = 0; l < L; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      const auto an = vec(b + "attn_norm.weight"), fn = vec(b + "ffn_norm.weight");
      const bool fused = f_.find_tensor(b + "attn_qkv.weight") != nullptr;
      const Proj pq = fused ? Proj{} : proj(b + "attn_q", false),
                 pk = fused ? Proj{} : proj(b + "attn_k", false),
                 pv = fused ? Proj{} : proj(b + "attn_v", false),
                 pqkv = fused ? proj(b + "attn_qkv", false) : Proj{},
                 po = proj(b + "attn_output", false), pg = proj(b + "ffn_gate", true),
                 pu = proj(b + "ffn_up", true), pd = proj(b + "ffn_down", true);
      std::vector<std::vector<double>> q(T), k(T), v(T);
      for (int t = 0; t < T; ++t) {
        const auto n = rms(x[t], an);
        if (fused) {  // rows: q, then k, then v
          const auto qkv = pqkv(n);
          q[t].assign(qkv.begin(), qkv.begin() + H * D);
          k[t].assign(qkv.begin() + H * D, qkv.begin() + (H + HK) * D);
          v[t].assign(qkv.begin() + (H + HK) * D, qkv.end());
        } else {
          q[t] = pq(n);
          k[t] = pk(n);
          v[t] = pv(n);
        }
        rope(q[t], t, H);
        rope(k[t], t, HK);
      }
      for (int t = 0; t < T; ++t) {
        const auto att = naive_causal_attention(q, k, v, t, H, HK, D);
        const auto o = po(att);
        for (int i = 0; i < E; ++i) x[t][i] += o[i];
        const auto n = rms(x[t], fn);
        auto g = pg(n);
        const auto u = pu(n);
        for (int i = 0; i < F; ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
        const auto dn = pd(g);
        for (int i = 0; i < E; ++i) x[t][i] += dn[i];
      }
    }
    const auto on = vec("output_norm.weight");
    const auto out = f_.find_tensor("output.weight") ? mat("output.weight") : emb;
    std::vector<std::vector<double>> res(T);
    for (int t = 0; t < T; ++t) res[t] = apply(out, rms(x[t], on));
    return res;
  }
  int n_vocab() const { return V; }

 private:
  using Mat = std::vector<std::vector<double>>;  // rows of ne[0] values
  Mat mat(const std::string& name) const {
    const gguf::TensorInfo* t = f_.find_tensor(name);
    Mat m(t->ne[1], std::vector<double>(t->ne[0]));
    std::vector<float> row(t->ne[0]);
    const int64_t rb = dtype::row_bytes(t->type, t->ne[0]);
    for (int64_t r = 0; r < t->ne[1]; ++r) {
      dtype::row_to_f32(t->type, t->data + r * rb, row.data(), t->ne[0]);
      for (int64_t c = 0; c < t->ne[0]; ++c) m[r][c] = row[c];
    }
    return m;
  }
  std::vector<double> vec(const std::string& name) const { return mat(name)[0]; }
  // W x with the optional bias and scale: x*W*s + b, or (x*W + b)*s for the FFN.
  struct Proj {
    Mat w;
    std::vector<double> b;
    double s = 1;
    bool bias_first = false;
    std::vector<double> operator()(const std::vector<double>& x) const {
      auto y = apply(w, x);
      for (size_t i = 0; i < y.size(); ++i) {
        const double bi = b.empty() ? 0.0 : b[i];
        y[i] = bias_first ? (y[i] + bi) * s : y[i] * s + bi;
      }
      return y;
    }
  };
  Proj proj(const std::string& base, bool bias_first) const {
    Proj p;
    p.w = mat(base + ".weight");
    if (f_.find_tensor(base + ".bias")) p.b = vec(base + ".bias");
    if (f_.find_tensor(base + ".scale")) p.s = vec(base + ".scale")[0];
    p.bias_first = bias_first;
    return p;
  }
  static std::vector<double> apply(const Mat& w, const std::vector<double>& x) {
    std::vector<double> y(w.size());
    for (size_t r = 0; r < w.size(); ++r)
      for (size_t c = 0; c < x.size(); ++c) y[r] += w[r][c] * x[c];
    return y;
  }
  std::vector<double> rms(const std::vector<double>& x, const std::vector<double>& w) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double s = 1.0 / std::sqrt(ss / x.size() + eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
    return y;
  }
  // llama.cpp LLAMA_ROPE_TYPE_NORM: adjacent pairs; frequency i divided by its factor, then
  // interpolated by the scaling factor, with YaRN blending back to the extrapolated angle for
  // the fast-rotating pairs and scaling the magnitude.
  void rope(std::vector<double>& v, int pos, int heads) const {
    auto corr = [&](double beta) {
      return D * std::log(n_ctx_orig / (beta * 2 * M_PI)) / (2 * std::log(base));
    };
    const double lo = std::max(0.0, std::floor(corr(32))),
                 hi = std::min(D - 1.0, std::ceil(corr(1)));
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < D / 2; ++i) {
        const double extrap =
            pos * std::pow(base, -2.0 * i / D) / (freq_factors.empty() ? 1.0 : freq_factors[i]);
        double th = extrap / scale_factor;
        if (yarn) {
          const double mix = 1 - std::min(1.0, std::max(0.0, (i - lo) / std::max(0.001, hi - lo)));
          th = th * (1 - mix) + extrap * mix;
        }
        double& a = v[h * D + 2 * i];
        double& b = v[h * D + 2 * i + 1];
        const double a0 = a, b0 = b;
        a = (a0 * std::cos(th) - b0 * std::sin(th)) * magnitude;
        b = (a0 * std::sin(th) + b0 * std::cos(th)) * magnitude;
      }
  }
  const gguf::File& f_;
  int E, L, F, H, HK, D, V;
  double eps, base;
  double scale_factor = 1, n_ctx_orig = 0, magnitude = 1;
  bool yarn = false;
  std::vector<double> freq_factors;
};

}  // namespace sy::test
