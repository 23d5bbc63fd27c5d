// Deterministic test data on every platform (std distributions are implementation defined): a
// xorshift generator; each suite picks its own salt so suites draw different data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sy::test {

struct XorShiftRng {
  uint64_t s;
  XorShiftRng(uint64_t seed, uint64_t salt) : s(seed * 0x9E3779B97F4A7C15ull + salt) {}
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * (float)((next() >> 40) * 0x1p-24); }
  std::vector<float> vec(size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(n);
    for (float& x : v) x = uniform(lo, hi);
    return v;
  }
};

}  // namespace sy::test
