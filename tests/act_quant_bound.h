// Test helper: the bound on what quantizing a matmul's activations to 8-bit blocks can change in
// one dot product. llama.cpp's CPU backend quantizes the activations of every matmul with
// quantised weights (Q8_0 blocks of 32 values, Q8_K blocks of 256, d = max|x| / 127), and
// cpu_onednn's GEMV does the same (kernels/kernels.h), so a naive reference on the exact F32
// activations may differ from either by this much: each value moves by at most d / 2, so the
// bound is the sum over blocks of d / 2 * sum |w|. Blocks of 256 cover both block sizes (a
// 32-value block's max is at most its 256-value block's).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sy::test {

inline double act_q8_bound(const float* x, const float* w, int64_t k) {
  double bound = 0;
  for (int64_t b0 = 0; b0 < k; b0 += 256) {
    double amax = 0, wsum = 0;
    for (int64_t c = b0; c < std::min<int64_t>(k, b0 + 256); ++c) {
      amax = std::max(amax, std::fabs((double)x[c]));
      wsum += std::fabs((double)w[c]);
    }
    bound += amax / 127.0 / 2.0 * wsum;
  }
  return bound * 1.0001;
}

}  // namespace sy::test
