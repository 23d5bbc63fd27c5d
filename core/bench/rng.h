// Deterministic random numbers for workloads. Our own samplers rather than <random>'s
// distributions, whose output differs between standard libraries: a seed names the same
// workload on every machine.
#pragma once

#include <cmath>
#include <cstdint>

namespace sy::bench {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  // splitmix64
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in the open interval (0, 1): safe to take the log of.
  double uniform() { return ((next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [lo, hi].
  uint32_t between(uint32_t lo, uint32_t hi) {
    return lo + static_cast<uint32_t>(next() % (uint64_t(hi) - lo + 1));
  }
  bool chance(double p) { return uniform() < p; }
  double normal() {  // Box-Muller
    return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
  }
  // Gamma(shape, scale 1): Marsaglia and Tsang (2000); shapes below 1 boosted by U^(1/shape).
  double gamma(double shape) {
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
  }

 private:
  uint64_t s_;
};

}  // namespace sy::bench
