// An independent, obviously-correct forward pass of `jamba`, `mamba` and MoE `llama` GGUFs
// (dequantised weights, double everywhere, token by token, no cache): the reference the hybrid
// runtime is checked against. Written from MODEL-NOTES sections 2-4 and llama.cpp's model
// graphs; shares no code with core/model.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "naive_attention.h"
#include "switchyard/common/dtype.h"

namespace sy::test {

class NaiveHybrid {
 public:
  explicit NaiveHybrid(const gguf::File& f) : f_(f) {
    arch_ = *f.get_string("general.architecture");
    const std::string p = arch_ + ".";
    E = int(*f.get_uint(p + "embedding_length"));
    L = int(*f.get_uint(p + "block_count"));
    eps = *f.get_float(p + "attention.layer_norm_rms_epsilon");
    V = int(f.find_tensor("token_embd.weight")->ne[1]);
    n_expert = int(f.get_uint(p + "expert_count").value_or(0));
    n_used = int(f.get_uint(p + "expert_used_count").value_or(0));
    if (arch_ == "llama") {
      H = int(*f.get_uint(p + "attention.head_count"));
      base = f.get_float(p + "rope.freq_base").value_or(10000.0);
    } else {
      dconv = int(*f.get_uint(p + "ssm.conv_kernel"));
      DI = int(*f.get_uint(p + "ssm.inner_size"));
      S = int(*f.get_uint(p + "ssm.state_size"));
      R = int(*f.get_uint(p + "ssm.time_step_rank"));
      if (arch_ == "jamba") H = int(*f.get_uint(p + "attention.head_count"));
    }
    for (int l = 0; l < L; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      recurrent_.push_back(arch_ == "mamba" ||
                           (arch_ == "jamba" && !f.find_tensor(b + "attn_q.weight")));
    }
  }

  // Logits after every token of `tokens` (one sequence from position 0); `k` overrides the
  // experts per token (0: the file's expert_used_count).
  std::vector<std::vector<double>> logits(const std::vector<int>& tokens, int k = 0) const {
    const int T = int(tokens.size());
    if (k == 0) k = n_used;
    const auto emb = mat("token_embd.weight");
    std::vector<Vec> x(T);
    for (int t = 0; t < T; ++t) x[t] = emb[tokens[t]];
    for (int l = 0; l < L; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      const auto an = vec(b + "attn_norm.weight");
      std::vector<Vec> mix = recurrent_[l] ? mamba(b, x, an) : attention(b, x, an);
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < E; ++i) x[t][i] += mix[t][i];
      if (arch_ == "mamba") continue;  // no FFN
      const auto fn = vec(b + "ffn_norm.weight");
      const bool moe = f_.find_tensor(b + "ffn_gate_inp.weight") != nullptr;
      for (int t = 0; t < T; ++t) {
        const Vec n = rms(x[t], fn);
        const Vec y = moe ? moe_ffn(b, n, k)
                          : ffn(mat(b + "ffn_gate.weight"), mat(b + "ffn_up.weight"),
                                mat(b + "ffn_down.weight"), n);
        for (int i = 0; i < E; ++i) x[t][i] += y[i];
      }
    }
    const auto on = vec("output_norm.weight");
    const auto out = f_.find_tensor("output.weight") ? mat("output.weight") : emb;
    std::vector<Vec> res(T);
    for (int t = 0; t < T; ++t) res[t] = apply(out, rms(x[t], on));
    return res;
  }
  int n_vocab() const { return V; }

 private:
  using Vec = std::vector<double>;
  using Mat = std::vector<Vec>;  // rows of ne[0] values; 3-D tensors: rows of all experts

  Mat mat(const std::string& name) const {
    const gguf::TensorInfo* t = f_.find_tensor(name);
    const int64_t rows = t->ne[1] * t->ne[2];
    Mat m(rows, Vec(t->ne[0]));
    std::vector<float> row(t->ne[0]);
    const int64_t rb = dtype::row_bytes(t->type, t->ne[0]);
    for (int64_t r = 0; r < rows; ++r) {
      dtype::row_to_f32(t->type, t->data + r * rb, row.data(), t->ne[0]);
      for (int64_t c = 0; c < t->ne[0]; ++c) m[r][c] = row[c];
    }
    return m;
  }
  Vec vec(const std::string& name) const { return mat(name)[0]; }
  static Vec apply(const Mat& w, const Vec& x, size_t r0 = 0, size_t n = 0) {
    if (n == 0) n = w.size() - r0;
    Vec y(n, 0.0);
    for (size_t r = 0; r < n; ++r)
      for (size_t c = 0; c < x.size(); ++c) y[r] += w[r0 + r][c] * x[c];
    return y;
  }
  Vec rms(const Vec& x, const Vec& w) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double s = 1.0 / std::sqrt(ss / x.size() + eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
    return y;
  }
  static double silu(double v) { return v / (1 + std::exp(-v)); }
  // SwiGLU FFN on rows [r0, r0 + nf) of gate/up and [d0, d0 + nd) of down (0: all rows).
  static Vec ffn(const Mat& g, const Mat& u, const Mat& d, const Vec& x, size_t r0 = 0,
                 size_t nf = 0, size_t d0 = 0, size_t nd = 0) {
    Vec a = apply(g, x, r0, nf);
    const Vec b = apply(u, x, r0, nf);
    for (size_t i = 0; i < a.size(); ++i) a[i] = silu(a[i]) * b[i];
    return apply(d, a, d0, nd);
  }

  // build_moe_ffn: softmax over all experts, top k (ties: lower id), Mixtral renormalises,
  // Jamba does not; experts summed in top-k order.
  Vec moe_ffn(const std::string& b, const Vec& x, int k) const {
    const Vec lg = apply(mat(b + "ffn_gate_inp.weight"), x);
    const double mx = *std::max_element(lg.begin(), lg.end());
    Vec p(lg.size());
    double z = 0;
    for (size_t e = 0; e < lg.size(); ++e) z += p[e] = std::exp(lg[e] - mx);
    for (double& v : p) v /= z;
    std::vector<int> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int c) { return p[a] > p[c]; });
    double wsum = 0;
    for (int j = 0; j < k; ++j) wsum += p[order[j]];
    const bool norm_w = arch_ == "llama";
    const auto g = mat(b + "ffn_gate_exps.weight"), u = mat(b + "ffn_up_exps.weight"),
               d = mat(b + "ffn_down_exps.weight");
    const size_t F = g.size() / n_expert;
    Vec y(E, 0.0);
    for (int j = 0; j < k; ++j) {
      const size_t e = order[j];
      const double w = norm_w ? p[e] / std::max(wsum, 6.103515625e-5) : p[e];
      // Expert e's rows: gate/up [e*F, (e+1)*F), down [e*E, (e+1)*E).
      const Vec o = ffn(g, u, d, x, e * F, F, e * E, E);
      for (int i = 0; i < E; ++i) y[i] += w * o[i];
    }
    return y;
  }

  // Causal attention over the sequence; RoPE (adjacent pairs) for llama, none for jamba.
  std::vector<Vec> attention(const std::string& b, const std::vector<Vec>& x, const Vec& an) const {
    const int T = int(x.size()), D = E / H;
    const auto wq = mat(b + "attn_q.weight"), wk = mat(b + "attn_k.weight"),
               wv = mat(b + "attn_v.weight"), wo = mat(b + "attn_output.weight");
    const int HK = int(wk.size()) / D;
    std::vector<Vec> q(T), k(T), v(T), out(T);
    for (int t = 0; t < T; ++t) {
      const Vec n = rms(x[t], an);
      q[t] = apply(wq, n);
      k[t] = apply(wk, n);
      v[t] = apply(wv, n);
      if (arch_ == "llama") {
        rope(q[t], t, H, D);
        rope(k[t], t, HK, D);
      }
    }
    for (int t = 0; t < T; ++t) {
      const auto att = naive_causal_attention(q, k, v, t, H, HK, D);
      out[t] = apply(wo, att);
    }
    return out;
  }
  void rope(Vec& v, int pos, int heads, int D) const {
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < D / 2; ++i) {
        const double th = pos * std::pow(base, -2.0 * i / D);
        const double a = v[h * D + 2 * i], c = v[h * D + 2 * i + 1];
        v[h * D + 2 * i] = a * std::cos(th) - c * std::sin(th);
        v[h * D + 2 * i + 1] = a * std::sin(th) + c * std::cos(th);
      }
  }

  // Mamba-1, MODEL-NOTES section 4, one token at a time with the conv window and SSM state.
  std::vector<Vec> mamba(const std::string& b, const std::vector<Vec>& x, const Vec& an) const {
    const int T = int(x.size());
    const auto in = mat(b + "ssm_in.weight"), conv = mat(b + "ssm_conv1d.weight"),
               xp = mat(b + "ssm_x.weight"), dtw = mat(b + "ssm_dt.weight"), A = mat(b + "ssm_a"),
               out = mat(b + "ssm_out.weight");
    const Vec cb = vec(b + "ssm_conv1d.bias"), dtb = vec(b + "ssm_dt.bias"), Dv = vec(b + "ssm_d");
    const bool norms = f_.find_tensor(b + "ssm_dt_norm.weight") != nullptr;
    std::vector<Vec> window(DI, Vec(dconv - 1, 0.0));  // previous inputs per channel
    std::vector<Vec> h(DI, Vec(S, 0.0));
    std::vector<Vec> res(T);
    for (int t = 0; t < T; ++t) {
      const Vec n = rms(x[t], an);
      const Vec u0 = apply(in, n, 0, DI), z = apply(in, n, DI, DI);
      Vec u(DI);
      for (int c = 0; c < DI; ++c) {
        double acc = cb[c];
        for (int j = 0; j < dconv - 1; ++j) acc += conv[c][j] * window[c][j];
        acc += conv[c][dconv - 1] * u0[c];
        if (dconv > 1) {
          window[c].erase(window[c].begin());
          window[c].push_back(u0[c]);
        }
        u[c] = silu(acc);
      }
      Vec dtr = apply(xp, u, 0, R), B = apply(xp, u, R, S), C = apply(xp, u, R + S, S);
      if (norms) {
        dtr = rms(dtr, vec(b + "ssm_dt_norm.weight"));
        B = rms(B, vec(b + "ssm_b_norm.weight"));
        C = rms(C, vec(b + "ssm_c_norm.weight"));
      }
      const Vec dt = apply(dtw, dtr);
      Vec y(DI);
      for (int i = 0; i < DI; ++i) {
        const double v = dt[i] + dtb[i];
        const double delta = v > 20 ? v : std::log1p(std::exp(v));
        double acc = 0;
        for (int s = 0; s < S; ++s) {
          h[i][s] = std::exp(delta * A[i][s]) * h[i][s] + delta * B[s] * u[i];
          acc += h[i][s] * C[s];
        }
        y[i] = (acc + Dv[i] * u[i]) * silu(z[i]);
      }
      res[t] = apply(out, y);
    }
    return res;
  }

  const gguf::File& f_;
  std::string arch_;
  int E = 0, L = 0, V = 0, H = 0, dconv = 0, DI = 0, S = 0, R = 0, n_expert = 0, n_used = 0;
  double eps = 1e-5, base = 10000;
  std::vector<bool> recurrent_;
};

}  // namespace sy::test
