// What the op tests share: element-wise comparison against a naive reference, scaled by each
// element's magnitude, and weight rows encoded in any dtype.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "switchyard/common/dtype.h"

namespace sy::test {

// Every element within rtol * mag + atol (+ extra[i], a per-element bound such as the activation
// quantization's; a zero limit allows only an exact match); reports the count of elements off and
// the worst one.
template <class Ref>
::testing::AssertionResult close(const std::vector<float>& got, const std::vector<Ref>& ref,
                                 const std::vector<double>& mag, double rtol, double atol = 0,
                                 const std::vector<double>* extra = nullptr) {
  if (got.size() != ref.size() || got.size() != mag.size())
    return ::testing::AssertionFailure() << "size mismatch";
  size_t bad = 0, worst = 0;
  double worst_ratio = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs((double)got[i] - (double)ref[i]),
                 lim = rtol * mag[i] + atol + (extra ? (*extra)[i] : 0.0);
    const double ratio = std::isnan(err) ? INFINITY
                         : lim > 0       ? err / lim
                                         : (err > 0 ? INFINITY : 0);
    if (ratio > 1) ++bad;
    if (ratio > worst_ratio) worst = i, worst_ratio = ratio;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements off; worst ["
                                       << worst << "] got " << got[worst] << " want " << ref[worst]
                                       << " (mag " << mag[worst] << ", rtol " << rtol << ")";
}

template <class T>
std::vector<double> abs_of(const std::vector<T>& v) {
  std::vector<double> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::fabs((double)v[i]);
  return a;
}

// Encodes n rows of k F32 values as `dtype`.
inline std::vector<uint8_t> encode(uint32_t dtype, const std::vector<float>& v, int64_t k,
                                   int64_t n) {
  const int64_t rb = sy::dtype::row_bytes(dtype, k);
  std::vector<uint8_t> out(rb * n);
  for (int64_t j = 0; j < n; ++j) sy::dtype::row_from_f32(dtype, &v[j * k], &out[j * rb], k);
  return out;
}

}  // namespace sy::test
