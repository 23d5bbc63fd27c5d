// Normalised mean squared error, llama.cpp's cross-backend measure: sum((ref - x)^2) / sum(ref^2).
#pragma once

#include <vector>

namespace sy::test {

inline double nmse(const std::vector<float>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return num / den;
}
inline std::vector<double> widen(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

}  // namespace sy::test
