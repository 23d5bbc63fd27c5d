// The scalar functions the reference loops share, in double.
#pragma once

#include <cmath>

namespace sy::cpu_ref {

inline double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}
inline double silu(double v) {
  return v / (1.0 + std::exp(-v));
}
// llama.cpp's softplus: the identity past 20, where exp would only add rounding.
inline double softplus(double v) {
  return v > 20.0 ? v : std::log1p(std::exp(v));
}

}  // namespace sy::cpu_ref
