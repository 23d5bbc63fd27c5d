#include "bench/stats.h"

#include <algorithm>
#include <cmath>

namespace sy::bench {

double percentile_sorted(const std::vector<double>& x, double p) {
  const double h = (x.size() - 1) * p / 100.0;
  const size_t lo = static_cast<size_t>(std::floor(h));
  // Exact hits skip the interpolation, so an infinite neighbour (a request that never finished)
  // does not turn a finite percentile into NaN.
  if (lo + 1 >= x.size() || h == lo) return x[lo];
  return x[lo] + (h - lo) * (x[lo + 1] - x[lo]);
}

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / v.size();
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / v.size());
  s.min = v.front();
  s.max = v.back();
  s.p50 = percentile_sorted(v, 50);
  s.p90 = percentile_sorted(v, 90);
  s.p99 = percentile_sorted(v, 99);
  return s;
}

}  // namespace sy::bench
