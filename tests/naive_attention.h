// Causal grouped-query attention in double, the one the naive reference models (naive_llama.h,
// naive_hybrid.h) share: written once so a fix to the reference reaches both.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace sy::test {

// Token t's attention output (H heads of D values) over tokens [0, t]: q, k, v hold one row per
// token (H, HK and HK heads of D values); query head h reads KV head h / (H / HK).
inline std::vector<double> naive_causal_attention(const std::vector<std::vector<double>>& q,
                                                  const std::vector<std::vector<double>>& k,
                                                  const std::vector<std::vector<double>>& v, int t,
                                                  int H, int HK, int D) {
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
  return att;
}

}  // namespace sy::test
