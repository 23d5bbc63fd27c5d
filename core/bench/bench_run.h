// Runs every variant of a compare config on the same workload, one after another (never two at
// once: they would share the cores), and gathers what the report shows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/capacity.h"
#include "bench/compare_config.h"
#include "bench/events.h"
#include "bench/metrics.h"
#include "bench/sweep.h"

namespace sy::bench {

class Progress;


struct CapacityResult {
  CapacitySpec spec;
  CapacityModel model;
  CapacityEstimate estimate;
  bool validated = false;
  double validation_rate = 0;     // target / replicas, replayed on one replica
  double measured_latency_s = 0;  // the SLO quantile measured there
  bool meets_slo = false;
};

struct VariantResult {
  std::string name;
  std::string skip_reason;  // non-empty: the variant did not run
  bool remote = false;      // replayed over HTTP: client-side metrics only
  std::string arch, backend, scheduler, model_path;
  uint64_t params = 0, active_params = 0, bytes_per_token = 0;
  RunLog log;
  ServingMetrics serving, simple, complex;
  EngineMetrics engine;
  std::vector<SweepPoint> sweep;  // in the order they ran
  Knee knee;
  std::optional<CapacityResult> capacity;
  double wall_s = 0;  // everything for this variant, model generation included
};

struct BenchReport {
  CompareConfig config;
  std::vector<VariantResult> variants;
  double run_time_s = 0;
};

BenchReport run_bench(const CompareConfig& config, Progress& progress);

// The p-th percentile (numpy linear) of TTFT, TPOT or E2EL (`metric`) over completed requests, in seconds; +inf
// when nothing completed (a saturated run misses every SLO).
double latency_quantile(const RunLog& log, const std::string& metric, double p);

// Mean arrival rate of a workload: n / last arrival offset (+inf when all arrive at once).
double offered_rate(const std::vector<WorkItem>& items);

}  // namespace sy::bench
