// `switchyard bench --endpoint URL --replicas N`: the capacity model meets real replicas. The
// model is fitted on one in-process variant (the one the replicas run); the frontend of a
// cluster of N replicas is then driven at multiples of the rate the model says N replicas
// carry within the SLO, and the report sets what it measured beside what the model predicted:
// latency at each rate, the highest rate within the SLO, and the replicas each says the target
// load needs. Rows accumulate per replica count in DIR/cluster.json, so measuring at 1 and then
// at 2 replicas into the same --out puts both side by side in DIR/cluster.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_run.h"

namespace sy::bench {

struct ClusterPoint {
  double offered_rate = 0;                               // requests/s sent to the frontend
  double request_throughput = 0, output_throughput = 0;  // measured
  size_t completed = 0, failed = 0;
  double measured_latency_s = 0;   // the capacity metric's quantile
  double predicted_latency_s = 0;  // the model's, at offered_rate / replicas per replica
  bool meets_slo = false;
};

struct ClusterRow {
  uint32_t replicas = 1;
  std::string endpoint, variant;
  double target_rate = 0, slo_s = 0;
  std::string metric;
  double percentile = 0;
  double model_per_replica_rate = 0;  // the rate one replica carries within the SLO
  uint32_t model_replicas = 0;        // for the target (0: infeasible)
  std::vector<ClusterPoint> points;
  double measured_capacity = 0;          // highest offered rate that met the SLO (0: none did)
  bool capacity_is_lower_bound = false;  // the highest probed rate met it
  double peak_throughput = 0;            // requests/s, the best any point achieved
  uint32_t measured_replicas = 0;  // for the target, from measured_capacity / replicas (0: n/a)
};

// The probe rates: these fractions of what the model says `replicas` replicas carry; while the
// last one still meets the SLO, 1.5 times the previous, up to kClusterProbeMax.
inline constexpr double kClusterProbeFractions[] = {0.5, 1.0, 1.5, 2.0, 3.0};
inline constexpr double kClusterProbeMax = 16;
// Each probe offers its rate for this long (bounded in requests); a point counts as carried
// when it meets the SLO with no failure and its throughput is at least kClusterKeepUp of the
// offered rate.
inline constexpr double kClusterProbeSeconds = 10;
inline constexpr uint32_t kClusterProbeMaxRequests = 600;
inline constexpr double kClusterKeepUp = 0.9;

// "http://host:port" (no path) becomes ".../v1/completions".
std::string completions_url(const std::string& endpoint);

// Drives the frontend; `cap` is the in-process variant's capacity result.
ClusterRow measure_cluster(const CompareConfig& cfg, const std::string& variant,
                           const CapacityResult& cap, const std::string& endpoint,
                           uint32_t replicas, Progress& progress,
                           double probe_seconds = kClusterProbeSeconds);

// Rows read from `path` (none when missing), `row` replacing one of the same replica count.
std::vector<ClusterRow> merge_cluster_rows(const std::filesystem::path& path, ClusterRow row);
void write_cluster_rows(const std::filesystem::path& path, const std::vector<ClusterRow>& rows);
std::string cluster_markdown(const std::vector<ClusterRow>& rows);

}  // namespace sy::bench
