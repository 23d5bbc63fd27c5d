#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "bench/report.h"

namespace sy::bench {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order the schema lists them

const char* arrival_name(WorkloadSpec::Arrival a) {
  switch (a) {
    case WorkloadSpec::Arrival::gamma:
      return "gamma";
    case WorkloadSpec::Arrival::trace:
      return "trace";
    default:
      return "poisson";
  }
}

// Numbers as the report has always given them: 6 significant digits, whole numbers without a
// fraction (0, not 0.0); JSON has no NaN or infinity, so those are null.
Json num(double v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  const double r = std::strtod(buf, nullptr);
  if (r == std::trunc(r) && std::fabs(r) < 9e15) return static_cast<int64_t>(r);
  return r;
}
template <typename T>
Json val(const T& v) {
  if constexpr (std::is_floating_point_v<T>)
    return num(v);
  else
    return Json(v);
}
template <typename T>
Json val(const std::optional<T>& v) {
  return v ? val(*v) : Json(nullptr);
}

Json length(const LengthDist& d) {
  Json j;
  switch (d.kind) {
    case LengthDist::Kind::fixed:
      j["dist"] = "fixed";
      j["value"] = val(d.value);
      break;
    case LengthDist::Kind::uniform:
      j["dist"] = "uniform";
      j["min"] = val(d.min);
      j["max"] = val(d.max);
      break;
    case LengthDist::Kind::normal:
      j["dist"] = "normal";
      j["mean"] = val(d.mean);
      j["std"] = val(d.std);
      j["min"] = val(d.min);
      j["max"] = val(d.max);
      break;
    case LengthDist::Kind::bimodal:
      j["dist"] = "bimodal";
      j["short"] = Json::array({val(d.short_min), val(d.short_max)});
      j["long"] = Json::array({val(d.long_min), val(d.long_max)});
      j["long_fraction"] = val(d.long_fraction);
      break;
  }
  return j;
}

Json workload(const WorkloadSpec& w) {
  Json j;
  j["seed"] = val(w.seed);
  j["requests"] = val(w.requests);
  j["arrival"] = arrival_name(w.arrival);
  j["rate"] = val(w.rate);  // rate inf -> null
  j["burstiness"] = val(w.burstiness);
  if (w.arrival == WorkloadSpec::Arrival::trace) j["trace"] = w.trace_path;
  j["simple_ratio"] = val(w.simple_ratio);
  j["shared_prefix_ratio"] = val(w.shared_prefix_ratio);
  j["shared_prefix_len"] = val(w.shared_prefix_len);
  for (auto [name, c] : {std::pair{"simple", &w.simple}, std::pair{"complex", &w.complex}})
    j[name] = Json{{"prompt_len", length(c->prompt)}, {"output_len", length(c->output)}};
  return j;
}

Json summary(const Summary& s) {
  if (!s.n) return nullptr;
  return Json{{"n", s.n},          {"mean", num(s.mean)}, {"std", num(s.std)}, {"min", num(s.min)},
              {"p50", num(s.p50)}, {"p90", num(s.p90)},   {"p99", num(s.p99)}, {"max", num(s.max)}};
}

Json serving(const ServingMetrics& m) {
  Json j;
  j["completed"] = val(m.completed);
  j["failed"] = val(m.failed);
  j["duration_s"] = val(m.duration_s);
  j["total_input_tokens"] = val(m.total_input);
  j["total_output_tokens"] = val(m.total_output);
  j["request_throughput"] = val(m.request_throughput);
  j["request_goodput"] = val(m.request_goodput);
  j["output_throughput"] = val(m.output_throughput);
  j["total_token_throughput"] = val(m.total_token_throughput);
  j["max_output_tokens_per_s"] = val(m.max_output_tokens_per_s);
  j["max_concurrent_requests"] = val(m.max_concurrent_requests);
  j["ttft_ms"] = summary(m.ttft_ms);
  j["tpot_ms"] = summary(m.tpot_ms);
  j["itl_ms"] = summary(m.itl_ms);
  j["e2el_ms"] = summary(m.e2el_ms);
  return j;
}

std::string path_name(int p) {
  return p == 0 ? "full" : p == 1 ? "light" : std::to_string(p);
}

Json engine(const EngineMetrics& e, const RunLog& log) {
  Json j;
  j["steps"] = val(e.steps);
  j["empty_steps"] = val(e.empty_steps);
  j["busy_s"] = val(e.busy_s);
  j["utilization"] = val(e.utilization);
  j["prefill_tokens"] = val(e.prefill_tokens);
  j["decode_tokens"] = val(e.decode_tokens);
  j["preemptions"] = val(e.preemptions);
  Json queue{{"mean", val(e.queue_mean)}, {"max", val(e.queue_max)}};
  // [t_s, waiting, running] after each step, at most ~600 samples.
  Json series = Json::array();
  const size_t stride = std::max<size_t>(1, log.steps.size() / 600);
  for (size_t i = 0; i < log.steps.size(); i += stride) {
    const auto& s = log.steps[i];
    series.push_back({num((s.t_ns - log.start_ns) / 1e9), s.n_waiting, s.n_running});
  }
  queue["series"] = std::move(series);
  j["queue_depth"] = std::move(queue);
  Json hist = Json::object();
  for (const auto& [b, n] : e.batch_hist) hist[std::to_string(b)] = val(n);
  j["batch_size"] = Json{{"summary", summary(e.batch_size)}, {"histogram", std::move(hist)}};
  j["prefix_cache_hit_rate"] = val(e.prefix_cache_hit_rate);
  Json split = Json::object();
  for (const auto& [p, n] : e.path_requests) split[path_name(p)] = val(n);
  j["path_split"] = std::move(split);
  j["routing_time_share"] = val(e.routing_time_share);
  j["overlap_hidden_share"] = val(e.overlap_hidden_share);
  if (!e.experts) {
    j["expert_activation"] = nullptr;
  } else {
    Json counts = Json::object();
    for (const auto& [layer, v] : e.experts->counts) {
      Json row = Json::array();
      for (double x : v) row.push_back(num(x));
      counts[std::to_string(layer)] = std::move(row);
    }
    j["expert_activation"] = Json{{"max_share", val(e.experts->max_share)},
                                  {"min_share", val(e.experts->min_share)},
                                  {"counts", std::move(counts)}};
  }
  const MemoryPeaks& m = e.memory;
  Json mem;
  mem["kv_block_bytes"] = val(m.kv_block_bytes);
  mem["state_bytes_per_seq"] = val(m.state_bytes_per_seq);
  mem["kv_allocated_bytes"] = val(m.kv_allocated_bytes);
  mem["peak_kv_blocks"] = val(m.peak_kv_blocks);
  mem["kv_window_block_bytes"] = val(m.kv_window_block_bytes);
  mem["peak_kv_window_blocks"] = val(m.peak_kv_window_blocks);
  mem["peak_bytes"] = val(m.peak_bytes);
  mem["state_snapshot_slots"] = val(m.state_snapshot_slots);
  mem["peak_state_snapshots"] = val(m.peak_snapshots);
  Json by_path = Json::object();
  for (const auto& [p, b] : m.peak_by_path) by_path[path_name(p)] = val(b);
  mem["peak_bytes_by_path"] = std::move(by_path);
  j["memory"] = std::move(mem);
  Json by_tokens = Json::array();
  for (const auto& b : e.cost_fit)
    by_tokens.push_back(Json{{"min_tokens", val(b.min_tokens)},
                             {"max_tokens", val(b.max_tokens)},
                             {"steps", val(b.steps)},
                             {"predicted_ms", val(b.predicted_ms)},
                             {"measured_ms", val(b.measured_ms)}});
  j["cost_model"] = Json{{"mean_relative_error", val(e.cost_fit_error)},
                         {"by_step_tokens", std::move(by_tokens)}};
  j["compute_per_request"] =
      Json{{"flops_estimate", val(e.flops_per_request)}, {"busy_ms", summary(e.cost_ms)}};
  // Raw host-counter deltas over the run, whatever components published.
  Json counters = Json::object();
  for (const auto& [k, v] : log.counters) counters[k] = val(v);
  j["counters"] = std::move(counters);
  return j;
}

Json capacity(const CapacityResult& c) {
  Json j;
  j["target_rate"] = val(c.spec.target_rate);
  j["metric"] = val(c.spec.metric);
  j["percentile"] = val(c.spec.percentile);
  j["slo_ms"] = val(c.spec.slo_ms);
  const CapacityModel& m = c.model;
  Json model;
  model["simple_ratio"] = val(m.simple_ratio);
  Json cost;
  for (auto [name, s] :
       {std::pair{"simple", &m.simple_cost_s}, std::pair{"complex", &m.complex_cost_s}}) {
    Summary ms = *s;
    for (double* x : {&ms.mean, &ms.std, &ms.min, &ms.max, &ms.p50, &ms.p90, &ms.p99}) *x *= 1e3;
    cost[name] = summary(ms);
  }
  model["cost_ms"] = std::move(cost);
  model["demand_ms"] = num(m.demand_s * 1e3);
  model["cs2"] = val(m.cs2);
  model["ca2"] = val(m.ca2);
  model["t0_ms"] = num(m.t0_s * 1e3);
  model["kappa"] = val(m.kappa);
  model["fit_points"] = val(m.fit_points);
  if (!m.error.empty()) model["error"] = m.error;
  j["model"] = std::move(model);
  Json estimate;
  estimate["per_replica_rate"] = val(c.estimate.per_replica_rate);
  estimate["replicas"] = val(c.estimate.replicas);
  estimate["predicted_latency_ms"] = num(c.estimate.predicted_latency_s * 1e3);
  if (!c.estimate.reason.empty()) estimate["reason"] = c.estimate.reason;
  j["estimate"] = std::move(estimate);
  if (!c.validated)
    j["validation"] = nullptr;
  else
    j["validation"] = Json{{"rate", val(c.validation_rate)},
                           {"measured_latency_ms", num(c.measured_latency_s * 1e3)},
                           {"meets_slo", c.meets_slo}};
  return j;
}

Json variant(const VariantResult& v) {
  Json j;
  j["name"] = v.name;
  j["status"] = v.skip_reason.empty() ? "ok" : "skipped";
  if (!v.skip_reason.empty()) {
    j["skip_reason"] = v.skip_reason;
    j["wall_s"] = val(v.wall_s);
    return j;
  }
  j["remote"] = v.remote;
  if (v.remote)
    j["model"] = nullptr;
  else
    j["model"] = Json{{"path", v.model_path},
                      {"arch", v.arch},
                      {"params", val(v.params)},
                      {"active_params", val(v.active_params)},
                      {"bytes_per_token", val(v.bytes_per_token)}};
  j["backend"] = v.backend;
  j["scheduler"] = v.scheduler;
  j["wall_s"] = val(v.wall_s);
  j["serving"] = serving(v.serving);
  j["by_class"] = Json{{"simple", serving(v.simple)}, {"complex", serving(v.complex)}};
  // Only an in-process run sees the engine.
  j["engine"] = v.remote ? Json(nullptr) : engine(v.engine, v.log);
  j["knee"] = v.knee.found ? Json{{"rate", val(v.knee.rate)},
                                  {"request_throughput", val(v.knee.throughput)},
                                  {"ttft_ms", val(v.knee.ttft_ms)}}
                           : Json(nullptr);
  Json sweep = Json::array();
  for (const auto& p : v.sweep)
    sweep.push_back(
        Json{{"rate", val(p.rate)},
             {"utilization", val(p.utilization)},
             {"requests", val(p.requests)},
             {"meets_slo", val(p.meets_slo)},
             {"ttft_ms_at_percentile", val(p.ttft_ms)},
             {"tpot_ms_at_percentile", val(p.tpot_ms)},
             {"request_throughput", val(p.serving.request_throughput)},
             {"output_throughput", val(p.serving.output_throughput)},
             {"completed", val(p.serving.completed)},
             {"failed", val(p.serving.failed)},
             {"ttft_p90_ms", p.serving.ttft_ms.n ? num(p.serving.ttft_ms.p90) : nullptr},
             {"e2el_p90_ms", p.serving.e2el_ms.n ? num(p.serving.e2el_ms.p90) : nullptr},
             {"batch_size_mean", val(p.batch_mean)},
             {"preemptions", val(p.preemptions)},
             {"prefix_cache_hit_rate", p.prefix_hit_rate < 0 ? nullptr : num(p.prefix_hit_rate)},
             {"slo_latency_ms", num(p.slo_latency_s * 1e3)}});
  j["sweep"] = std::move(sweep);
  if (v.capacity) j["capacity"] = capacity(*v.capacity);
  return j;
}

}  // namespace

std::string report_json(const BenchReport& r) {
  Json j;
  j["schema"] = "switchyard.bench";
  j["schema_version"] = kReportSchemaVersion;
  j["config"] = r.config.origin;
  j["run_time_s"] = val(r.run_time_s);
  j["definitions"] = Json{
      {"source", "vllm bench serve (vllm/benchmarks/serve.py): TTFT, TPOT, ITL, E2EL, goodput"},
      {"percentile", "numpy linear interpolation"},
      {"arrival",
       "scheduled arrival time; latencies include time queued before the engine saw a request"}};
  j["workload"] = workload(r.config.workload);
  j["slo"] = Json{{"ttft_ms", val(r.config.slo.ttft_ms)},
                  {"tpot_ms", val(r.config.slo.tpot_ms)},
                  {"e2el_ms", val(r.config.slo.e2el_ms)}};
  Json variants = Json::array();
  for (const auto& v : r.variants) variants.push_back(variant(v));
  j["variants"] = std::move(variants);
  return j.dump(2) + "\n";
}

}  // namespace sy::bench
