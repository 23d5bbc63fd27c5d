// An independent, obviously-correct llama forward pass straight from a GGUF file (dequantised
// weights, double accumulation, no cache): the reference the model runtime is checked against.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "gguf/gguf.h"
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
    D = E / H;
    eps = *f.get_float("llama.attention.layer_norm_rms_epsilon");
    base = f.get_float("llama.rope.freq_base").value_or(10000.0);
    V = int(f.find_tensor("token_embd.weight")->ne[1]);
  }

  // Logits for every position of `tokens` (row t = after token t).
  std::vector<std::vector<double>> logits(const std::vector<int>& tokens) const {
    const int T = int(tokens.size());
    const auto emb = mat("token_embd.weight");
    std::vector<std::vector<double>> x(T);
    for (int t = 0; t < T; ++t) x[t] = emb[tokens[t]];
    for (int l = 0; l < L; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      const auto wq = mat(b + "attn_q.weight"), wk = mat(b + "attn_k.weight"), wv = mat(b + "attn_v.weight"),
                 wo = mat(b + "attn_output.weight"), wg = mat(b + "ffn_gate.weight"),
                 wu = mat(b + "ffn_up.weight"), wd = mat(b + "ffn_down.weight");
      const auto an = vec(b + "attn_norm.weight"), fn = vec(b + "ffn_norm.weight");
      std::vector<std::vector<double>> q(T), k(T), v(T);
      for (int t = 0; t < T; ++t) {
        const auto n = rms(x[t], an);
        q[t] = apply(wq, n);
        k[t] = apply(wk, n);
        v[t] = apply(wv, n);
        rope(q[t], t, H);
        rope(k[t], t, HK);
      }
      for (int t = 0; t < T; ++t) {
        std::vector<double> att(H * D, 0.0);
        for (int h = 0; h < H; ++h) {
          const int kh = h / (H / HK);
          std::vector<double> s(t + 1);
          double mx = -1e300;
          for (int j = 0; j <= t; ++j) {
            double d = 0;
            for (int i = 0; i < D; ++i) d += q[t][h * D + i] * k[j][kh * D + i];
            s[j] = d / std::sqrt(double(D));
            mx = std::max(mx, s[j]);
          }
          double z = 0;
          for (auto& e : s) z += (e = std::exp(e - mx));
          for (int j = 0; j <= t; ++j)
            for (int i = 0; i < D; ++i) att[h * D + i] += s[j] / z * v[j][kh * D + i];
        }
        const auto o = apply(wo, att);
        for (int i = 0; i < E; ++i) x[t][i] += o[i];
        const auto n = rms(x[t], fn);
        auto g = apply(wg, n);
        const auto u = apply(wu, n);
        for (int i = 0; i < F; ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
        const auto dn = apply(wd, g);
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
  // llama.cpp LLAMA_ROPE_TYPE_NORM: adjacent pairs.
  void rope(std::vector<double>& v, int pos, int heads) const {
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < D / 2; ++i) {
        const double th = pos * std::pow(base, -2.0 * i / D);
        double& a = v[h * D + 2 * i];
        double& b = v[h * D + 2 * i + 1];
        const double a0 = a, b0 = b;
        a = a0 * std::cos(th) - b0 * std::sin(th);
        b = a0 * std::sin(th) + b0 * std::cos(th);
      }
  }
  const gguf::File& f_;
  int E, L, F, H, HK, D, V;
  double eps, base;
};

}  // namespace sy::test
