// The offered-load sweep and its knee. A sweep replays the workload at a series of offered
// rates: the configured list, or an automatic one that starts low, multiplies the rate by a
// factor until throughput stops rising past the first point that misses the SLO (so every
// variant is driven past its saturation), and then bisects between the knee and that miss. The knee
// is a variant's highest request throughput among the points that meet the SLO at the sweep's
// percentile (TTFT, and TPOT / E2EL where [slo] sets them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/compare_config.h"
#include "bench/metrics.h"

namespace sy::bench {

struct SweepPoint {
  double rate = 0;  // offered requests/s
  uint32_t requests = 0;
  ServingMetrics serving;
  double utilization = 0;
  double slo_latency_s = 0;  // the capacity metric's quantile (capacity configured)
  // At the sweep's percentile, in ms (+inf when a request never finished).
  double ttft_ms = 0, tpot_ms = 0, e2el_ms = 0;
  bool meets_slo = false;
  // How the engine ran it: sequences per step, preemptions, prefix-cache hit rate (-1: no cache).
  double batch_mean = 0;
  uint32_t preemptions = 0;
  double prefix_hit_rate = -1;
};

struct Knee {
  bool found = false;  // some point met the SLO
  double rate = 0, throughput = 0, ttft_ms = 0;
};

// Whether a point's latencies at the sweep percentile meet every SLO [slo] sets (none set:
// every point does).
bool meets_slo(const SweepPoint& p, const Slo& slo);

// The highest-throughput point meeting the SLO.
Knee find_knee(const std::vector<SweepPoint>& points);

// Which rate to run next, given the points run so far (in the order they ran).
class SweepPlanner {
 public:
  explicit SweepPlanner(const SweepSpec& spec) : spec_(spec) {}
  std::optional<double> next(const std::vector<SweepPoint>& done);
  uint32_t requests_at(double rate) const;

 private:
  const SweepSpec& spec_;
  uint32_t down_probes_ = 0;
  uint32_t refined_ = 0;
};

// "Knee (max request throughput with TTFT p99 <= 1000 ms): a 2.1 req/s; b 7.3 req/s (3.5x a)":
// each variant's knee and, for variants sharing a name prefix before the first '/', the ratio
// to the first of them (dense/original, dense/optimized: optimized over original).
std::string knee_headline(const std::vector<std::pair<std::string, Knee>>& knees, const Slo& slo,
                          double percentile);

}  // namespace sy::bench
