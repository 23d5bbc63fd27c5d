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

struct SweepSpec {
  std::vector<double> rates;  // requests/s; empty: no sweep
  uint32_t requests = 16;     // per rate
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
