// The compare file: one workload, SLOs, a request-rate sweep, a capacity question, and the
// variants to run it against. Each [[variants]] entry holds a name and the same tables as a
// single-variant config (configs/dense.toml), read by the same parser, so its errors name
// file:line:column: key like any config error.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/metrics.h"
#include "bench/workload.h"
#include "config/config.h"

namespace sy::bench {

// The offered-load sweep (bench/sweep.h): the listed rates, or with no list an automatic one
// from `start`, `factor` times the last each point, until throughput stops rising (the highest
// load within `min_rise` of the best lower one) past the first point that misses the SLO, at
// most `max_points`, then `refine` points bisecting (geometrically) between the knee and the
// first load above it that missed.
struct SweepSpec {
  bool enabled = false;       // a [sweep] table is present
  std::vector<double> rates;  // requests/s; empty: the automatic sweep
  uint32_t requests = 16;     // per point (with `seconds`: the most per point)
  double seconds = 0;         // > 0: rate x seconds requests per point, at least min_requests
  uint32_t min_requests = 8;
  double start = 1.0, factor = 1.6;
  uint32_t max_points = 10;
  double min_rise = 0.05;
  uint32_t refine = 2;
  double percentile = 99;  // the knee's SLO: [slo] latencies at this percentile
};

struct CapacitySpec {
  double target_rate = 0;       // requests/s the fleet must carry
  std::string metric = "ttft";  // ttft or e2el
  double percentile = 90;
  double slo_ms = 1000;
  std::optional<double> simple_ratio;  // the target traffic mix (default: the workload's)
  bool validate = true;                // replay at target_rate / replicas and compare
  uint32_t requests = 32;              // in the validation run
};

struct RunSpec {
  double timeout_s = 300;  // per replay
  uint32_t warmup_requests = 2;
};

struct VariantSpec {
  std::string name;
  Config config;             // in-process variants
  std::string endpoint;      // HTTP variants: a running server's completions URL (no config tables)
  std::string served_model;  // the "model" field sent to it ("" = none)
  std::string where;         // origin:line:col of the entry, for messages
};

struct CompareConfig {
  std::string origin;
  std::string log_level = "warn";
  WorkloadSpec workload;
  Slo slo;
  SweepSpec sweep;
  std::optional<CapacitySpec> capacity;
  RunSpec run;
  std::vector<VariantSpec> variants;
};

// Throws ConfigError("<origin>:<line>:<col>: <key>: <problem>").
CompareConfig parse_compare(const std::string& text, const std::string& origin);
CompareConfig load_compare(const std::filesystem::path& path);

}  // namespace sy::bench
