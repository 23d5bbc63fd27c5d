#include "bench/cluster_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/http_client.h"
#include "bench/http_driver.h"
#include "bench/progress.h"
#include "config/config.h"
#include "switchyard/common/error.h"

namespace sy::bench {
namespace {

using nlohmann::json;

std::string num(double v, const char* f = "%.3g") {
  if (!std::isfinite(v)) return "inf";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

json to_json(const ClusterRow& r) {
  json pts = json::array();
  for (const auto& p : r.points)
    pts.push_back(
        {{"offered_rate", p.offered_rate},
         {"request_throughput", p.request_throughput},
         {"output_throughput", p.output_throughput},
         {"completed", p.completed},
         {"failed", p.failed},
         {"measured_latency_s",
          std::isfinite(p.measured_latency_s) ? json(p.measured_latency_s) : json(nullptr)},
         {"predicted_latency_s",
          std::isfinite(p.predicted_latency_s) ? json(p.predicted_latency_s) : json(nullptr)},
         {"meets_slo", p.meets_slo}});
  return {{"replicas", r.replicas},
          {"endpoint", r.endpoint},
          {"variant", r.variant},
          {"target_rate", r.target_rate},
          {"slo_s", r.slo_s},
          {"metric", r.metric},
          {"percentile", r.percentile},
          {"model_per_replica_rate", r.model_per_replica_rate},
          {"model_replicas", r.model_replicas},
          {"measured_capacity", r.measured_capacity},
          {"capacity_is_lower_bound", r.capacity_is_lower_bound},
          {"peak_throughput", r.peak_throughput},
          {"measured_replicas", r.measured_replicas},
          {"points", pts}};
}

double num_or_inf(const json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::infinity();
}

ClusterRow from_json(const json& j) {
  ClusterRow r;
  r.replicas = j.at("replicas");
  r.endpoint = j.at("endpoint");
  r.variant = j.at("variant");
  r.target_rate = j.at("target_rate");
  r.slo_s = j.at("slo_s");
  r.metric = j.at("metric");
  r.percentile = j.at("percentile");
  r.model_per_replica_rate = j.at("model_per_replica_rate");
  r.model_replicas = j.at("model_replicas");
  r.measured_capacity = j.at("measured_capacity");
  r.capacity_is_lower_bound = j.at("capacity_is_lower_bound");
  r.peak_throughput = j.at("peak_throughput");
  r.measured_replicas = j.at("measured_replicas");
  for (const auto& p : j.at("points"))
    r.points.push_back({p.at("offered_rate"), p.at("request_throughput"), p.at("output_throughput"),
                        p.at("completed"), p.at("failed"), num_or_inf(p.at("measured_latency_s")),
                        num_or_inf(p.at("predicted_latency_s")), p.at("meets_slo")});
  return r;
}

}  // namespace

std::string completions_url(const std::string& endpoint) {
  const Url u = parse_url(endpoint);  // throws on a malformed one
  if (u.path == "/" || u.path.empty())
    return "http://" + u.host + ":" + std::to_string(u.port) + "/v1/completions";
  return endpoint;
}

ClusterRow measure_cluster(const CompareConfig& cfg, const std::string& variant,
                           const CapacityResult& cap, const std::string& endpoint,
                           uint32_t replicas, Progress& progress, double probe_seconds) {
  ClusterRow row;
  row.replicas = replicas;
  row.endpoint = endpoint;
  row.variant = variant;
  row.target_rate = cap.spec.target_rate;
  row.slo_s = cap.spec.slo_ms / 1e3;
  row.metric = cap.spec.metric;
  row.percentile = cap.spec.percentile;
  row.model_per_replica_rate = cap.estimate.per_replica_rate;
  row.model_replicas = cap.estimate.replicas;
  if (row.model_per_replica_rate <= 0)
    throw sy::Error("the capacity model found no rate within the SLO (" + cap.estimate.reason +
                    "): nothing to compare the cluster with");
  const std::string url = completions_url(endpoint);
  DriverOptions o;
  o.timeout_s = cfg.run.timeout_s;
  o.on_progress = [&progress](size_t done, size_t) { progress.update(done); };
  // Sustained probes: a short burst is a backlog the replicas drain within any TTFT SLO, not a
  // load they carry, so each lasts probe_seconds (at least sweep.requests requests).
  std::vector<double> factors(std::begin(kClusterProbeFractions), std::end(kClusterProbeFractions));
  for (size_t i = 0; i < factors.size(); ++i) {
    ClusterPoint p;
    p.offered_rate = factors[i] * replicas * row.model_per_replica_rate;
    const uint32_t n = std::clamp<uint32_t>(
        static_cast<uint32_t>(std::ceil(p.offered_rate * probe_seconds)),
        std::max<uint32_t>(cfg.sweep.requests, 8), kClusterProbeMaxRequests);
    const auto items = generate_workload(at_rate(cfg.workload, p.offered_rate, n));
    progress.begin("[cluster x" + std::to_string(replicas) + "] " + num(p.offered_rate) + " req/s",
                   items.size());
    const RunLog log = replay_http(url, "", items, o);
    const ServingMetrics s = serving_metrics(log, cfg.slo);
    p.request_throughput = s.request_throughput;
    p.output_throughput = s.output_throughput;
    p.completed = s.completed;
    p.failed = s.failed;
    p.measured_latency_s = latency_quantile(log, row.metric, row.percentile);
    p.predicted_latency_s = cap.model.latency_at(p.offered_rate / replicas);
    // Within the SLO and keeping up: a cluster that falls behind the offered rate is not
    // carrying it, whatever the latency of what it did serve.
    p.meets_slo = p.failed == 0 && p.measured_latency_s <= row.slo_s &&
                  p.request_throughput >= kClusterKeepUp * p.offered_rate;
    progress.end(std::to_string(p.completed) + "/" + std::to_string(items.size()) + " ok, p" +
                 num(row.percentile, "%g") + " " + row.metric + " " +
                 num(p.measured_latency_s * 1e3) + " ms");
    row.peak_throughput = std::max(row.peak_throughput, p.request_throughput);
    if (p.meets_slo && p.offered_rate > row.measured_capacity)
      row.measured_capacity = p.offered_rate;
    row.points.push_back(p);
    // Past the planned probes and still within the SLO: the model under-predicts; go on up
    // (by half again each time, bounded) until the cluster misses it.
    if (i + 1 == factors.size() && p.meets_slo && factors.back() * 1.5 <= kClusterProbeMax)
      factors.push_back(factors.back() * 1.5);
  }
  row.capacity_is_lower_bound = !row.points.empty() && row.points.back().meets_slo;
  if (row.measured_capacity > 0)
    row.measured_replicas = static_cast<uint32_t>(
        std::max(1.0, std::ceil(row.target_rate / (row.measured_capacity / replicas) - 1e-9)));
  return row;
}

std::vector<ClusterRow> merge_cluster_rows(const std::filesystem::path& path, ClusterRow row) {
  std::vector<ClusterRow> rows;
  if (std::ifstream in(path); in) {
    json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_array())
      throw ConfigError(path.string() + ": not a cluster.json written by switchyard bench");
    for (const auto& r : j) rows.push_back(from_json(r));
  }
  std::erase_if(rows, [&](const ClusterRow& r) { return r.replicas == row.replicas; });
  rows.push_back(std::move(row));
  std::sort(rows.begin(), rows.end(),
            [](const ClusterRow& a, const ClusterRow& b) { return a.replicas < b.replicas; });
  return rows;
}

void write_cluster_rows(const std::filesystem::path& path, const std::vector<ClusterRow>& rows) {
  json j = json::array();
  for (const auto& r : rows) j.push_back(to_json(r));
  std::ofstream(path) << j.dump(2) << '\n';
}

std::string cluster_markdown(const std::vector<ClusterRow>& rows) {
  std::string s = "## Cluster: the capacity model against real replicas\n\n";
  if (rows.empty()) return s + "No cluster measured.\n";
  const ClusterRow& a = rows.back();
  s += "Target " + num(a.target_rate) + " req/s within p" + num(a.percentile, "%g") + " " +
       a.metric + " <= " + num(a.slo_s * 1e3) + " ms. The model is fitted on the in-process " +
       "variant `" + a.variant + "` (one replica = one engine with its own cores) and assumes " +
       "replicas split the load evenly. Measured capacity = the highest probed rate whose " + "p" +
       num(a.percentile, "%g") + " met the SLO with no failure.\n\n";
  s += "| replicas | model: capacity (req/s) | measured capacity (req/s) | measured / model | "
       "peak throughput (req/s) | model: replicas for target | measured: replicas for target |\n";
  s += "|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const double model_cap = r.replicas * r.model_per_replica_rate;
    const std::string meas =
        r.measured_capacity > 0
            ? (r.capacity_is_lower_bound ? ">= " : "") + num(r.measured_capacity)
            : "< " + num(r.points.empty() ? 0 : r.points.front().offered_rate);
    s += "| " + std::to_string(r.replicas) + " | " + num(model_cap) + " | " + meas + " | " +
         (r.measured_capacity > 0 ? num(r.measured_capacity / model_cap, "%.2f") : "n/a") + " | " +
         num(r.peak_throughput) + " | " +
         (r.model_replicas ? std::to_string(r.model_replicas) : "infeasible") + " | " +
         (r.measured_replicas
              ? (r.capacity_is_lower_bound ? "<= " : "") + std::to_string(r.measured_replicas)
              : "n/a") +
         " |\n";
  }
  for (const auto& r : rows) {
    s += "\n### " + std::to_string(r.replicas) + " replica" + (r.replicas > 1 ? "s" : "") + " (" +
         r.endpoint + ")\n\n";
    s += "| offered (req/s) | achieved (req/s) | output tok/s | failed | measured p" +
         num(r.percentile, "%g") + " " + r.metric + " (ms) | model p" + num(r.percentile, "%g") +
         " (ms) | within SLO |\n|---|---|---|---|---|---|---|\n";
    for (const auto& p : r.points)
      s += "| " + num(p.offered_rate) + " | " + num(p.request_throughput) + " | " +
           num(p.output_throughput) + " | " + std::to_string(p.failed) + " | " +
           num(p.measured_latency_s * 1e3) + " | " + num(p.predicted_latency_s * 1e3) + " | " +
           (p.meets_slo ? "yes" : "no") + " |\n";
  }
  return s;
}

}  // namespace sy::bench
