// Summary statistics as vLLM's benchmark reports them: mean, population std (numpy's default
// ddof=0) and percentiles with numpy's default "linear" interpolation.
#pragma once

#include <cstddef>
#include <vector>

namespace sy::bench {

// numpy.percentile(x, p) with method="linear": sorted x, h = (n-1)*p/100,
// x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]). `sorted` must be ascending,
// non-empty.
double percentile_sorted(const std::vector<double>& sorted, double p);

struct Summary {
  size_t n = 0;  // 0: no samples, every other field is meaningless (reported as null / n/a)
  double mean = 0, std = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0;
};

Summary summarize(std::vector<double> values);

}  // namespace sy::bench
