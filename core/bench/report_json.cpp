#include <algorithm>
#include <cmath>

#include "bench/json.h"
#include "bench/report.h"

namespace sy::bench {
namespace {

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

void length(JsonWriter& j, const char* k, const LengthDist& d) {
  j.key(k).begin_object();
  switch (d.kind) {
    case LengthDist::Kind::fixed:
      j.field("dist", "fixed").field("value", d.value);
      break;
    case LengthDist::Kind::uniform:
      j.field("dist", "uniform").field("min", d.min).field("max", d.max);
      break;
    case LengthDist::Kind::normal:
      j.field("dist", "normal")
          .field("mean", d.mean)
          .field("std", d.std)
          .field("min", d.min)
          .field("max", d.max);
      break;
    case LengthDist::Kind::bimodal:
      j.field("dist", "bimodal")
          .key("short")
          .begin_array(true)
          .value(d.short_min)
          .value(d.short_max)
          .end_array();
      j.key("long").begin_array(true).value(d.long_min).value(d.long_max).end_array();
      j.field("long_fraction", d.long_fraction);
      break;
  }
  j.end_object();
}

void workload(JsonWriter& j, const WorkloadSpec& w) {
  j.key("workload").begin_object();
  j.field("seed", w.seed).field("requests", w.requests).field("arrival", arrival_name(w.arrival));
  j.field("rate", w.rate).field("burstiness", w.burstiness);  // rate inf -> null
  if (w.arrival == WorkloadSpec::Arrival::trace) j.field("trace", w.trace_path);
  j.field("simple_ratio", w.simple_ratio).field("shared_prefix_ratio", w.shared_prefix_ratio);
  j.field("shared_prefix_len", w.shared_prefix_len);
  for (auto [name, c] : {std::pair{"simple", &w.simple}, std::pair{"complex", &w.complex}}) {
    j.key(name).begin_object();
    length(j, "prompt_len", c->prompt);
    length(j, "output_len", c->output);
    j.end_object();
  }
  j.end_object();
}

void summary(JsonWriter& j, const char* k, const Summary& s) {
  j.key(k);
  if (!s.n) {
    j.null();
    return;
  }
  j.begin_object().field("n", s.n).field("mean", s.mean).field("std", s.std).field("min", s.min);
  j.field("p50", s.p50).field("p90", s.p90).field("p99", s.p99).field("max", s.max).end_object();
}

void serving(JsonWriter& j, const char* k, const ServingMetrics& m) {
  j.key(k).begin_object();
  j.field("completed", m.completed).field("failed", m.failed).field("duration_s", m.duration_s);
  j.field("total_input_tokens", m.total_input).field("total_output_tokens", m.total_output);
  j.field("request_throughput", m.request_throughput).field("request_goodput", m.request_goodput);
  j.field("output_throughput", m.output_throughput)
      .field("total_token_throughput", m.total_token_throughput);
  j.field("max_output_tokens_per_s", m.max_output_tokens_per_s);
  j.field("max_concurrent_requests", m.max_concurrent_requests);
  summary(j, "ttft_ms", m.ttft_ms);
  summary(j, "tpot_ms", m.tpot_ms);
  summary(j, "itl_ms", m.itl_ms);
  summary(j, "e2el_ms", m.e2el_ms);
  j.end_object();
}

void engine(JsonWriter& j, const EngineMetrics& e, const RunLog& log) {
  j.key("engine").begin_object();
  j.field("steps", e.steps).field("empty_steps", e.empty_steps).field("busy_s", e.busy_s);
  j.field("utilization", e.utilization).field("prefill_tokens", e.prefill_tokens);
  j.field("decode_tokens", e.decode_tokens).field("preemptions", e.preemptions);
  j.key("queue_depth").begin_object().field("mean", e.queue_mean).field("max", e.queue_max);
  // [t_s, waiting, running] after each step, at most ~600 samples.
  j.key("series").begin_array();
  const size_t stride = std::max<size_t>(1, log.steps.size() / 600);
  for (size_t i = 0; i < log.steps.size(); i += stride) {
    const auto& s = log.steps[i];
    j.begin_array(true)
        .value((s.t_ns - log.start_ns) / 1e9)
        .value(s.n_waiting)
        .value(s.n_running)
        .end_array();
  }
  j.end_array().end_object();
  j.key("batch_size").begin_object();
  summary(j, "summary", e.batch_size);
  j.key("histogram").begin_object();
  for (const auto& [b, n] : e.batch_hist) j.field(std::to_string(b), n);
  j.end_object().end_object();
  j.field("prefix_cache_hit_rate", e.prefix_cache_hit_rate);
  j.key("path_split").begin_object();
  for (const auto& [p, n] : e.path_requests)
    j.field(p == 0 ? "full" : p == 1 ? "light" : std::to_string(p), n);
  j.end_object();
  j.field("routing_time_share", e.routing_time_share);
  j.field("overlap_hidden_share", e.overlap_hidden_share);
  j.key("expert_activation");
  if (!e.experts) {
    j.null();
  } else {
    j.begin_object()
        .field("max_share", e.experts->max_share)
        .field("min_share", e.experts->min_share);
    j.key("counts").begin_object();
    for (const auto& [layer, v] : e.experts->counts) {
      j.key(std::to_string(layer)).begin_array(true);
      for (double x : v) j.value(x);
      j.end_array();
    }
    j.end_object().end_object();
  }
  const MemoryPeaks& m = e.memory;
  j.key("memory").begin_object().field("kv_block_bytes", m.kv_block_bytes);
  j.field("state_bytes_per_seq", m.state_bytes_per_seq)
      .field("kv_allocated_bytes", m.kv_allocated_bytes);
  j.field("peak_kv_blocks", m.peak_kv_blocks).field("peak_bytes", m.peak_bytes);
  j.field("state_snapshot_slots", m.state_snapshot_slots)
      .field("peak_state_snapshots", m.peak_snapshots);
  j.key("peak_bytes_by_path").begin_object();
  for (const auto& [p, b] : m.peak_by_path)
    j.field(p == 0 ? "full" : p == 1 ? "light" : std::to_string(p), b);
  j.end_object().end_object();
  j.key("cost_model").begin_object().field("mean_relative_error", e.cost_fit_error);
  j.key("by_step_tokens").begin_array();
  for (const auto& b : e.cost_fit) {
    j.begin_object().field("min_tokens", b.min_tokens).field("max_tokens", b.max_tokens);
    j.field("steps", b.steps).field("predicted_ms", b.predicted_ms);
    j.field("measured_ms", b.measured_ms).end_object();
  }
  j.end_array().end_object();
  j.key("compute_per_request").begin_object().field("flops_estimate", e.flops_per_request);
  summary(j, "busy_ms", e.cost_ms);
  j.end_object();
  // Raw host-counter deltas over the run, whatever components published.
  j.key("counters").begin_object();
  for (const auto& [k, v] : log.counters) j.field(k, v);
  j.end_object();
  j.end_object();
}

void capacity(JsonWriter& j, const CapacityResult& c) {
  j.key("capacity").begin_object();
  j.field("target_rate", c.spec.target_rate).field("metric", c.spec.metric);
  j.field("percentile", c.spec.percentile).field("slo_ms", c.spec.slo_ms);
  const CapacityModel& m = c.model;
  j.key("model").begin_object().field("simple_ratio", m.simple_ratio);
  j.key("cost_ms").begin_object();
  for (auto [name, s] :
       {std::pair{"simple", &m.simple_cost_s}, std::pair{"complex", &m.complex_cost_s}}) {
    Summary ms = *s;
    for (double* x : {&ms.mean, &ms.std, &ms.min, &ms.max, &ms.p50, &ms.p90, &ms.p99}) *x *= 1e3;
    summary(j, name, ms);
  }
  j.end_object();
  j.field("demand_ms", m.demand_s * 1e3).field("cs2", m.cs2).field("ca2", m.ca2);
  j.field("t0_ms", m.t0_s * 1e3).field("kappa", m.kappa).field("fit_points", m.fit_points);
  if (!m.error.empty()) j.field("error", m.error);
  j.end_object();
  j.key("estimate").begin_object().field("per_replica_rate", c.estimate.per_replica_rate);
  j.field("replicas", c.estimate.replicas);
  j.field("predicted_latency_ms", c.estimate.predicted_latency_s * 1e3);
  if (!c.estimate.reason.empty()) j.field("reason", c.estimate.reason);
  j.end_object();
  j.key("validation");
  if (!c.validated) {
    j.null();
  } else {
    j.begin_object().field("rate", c.validation_rate);
    j.field("measured_latency_ms", c.measured_latency_s * 1e3)
        .field("meets_slo", c.meets_slo)
        .end_object();
  }
  j.end_object();
}

}  // namespace

std::string report_json(const BenchReport& r) {
  JsonWriter j;
  j.begin_object()
      .field("schema", "switchyard.bench")
      .field("schema_version", kReportSchemaVersion);
  j.field("config", r.config.origin).field("run_time_s", r.run_time_s);
  j.key("definitions").begin_object();
  j.field("source", "vllm bench serve (vllm/benchmarks/serve.py): TTFT, TPOT, ITL, E2EL, goodput");
  j.field("percentile", "numpy linear interpolation");
  j.field("arrival",
          "scheduled arrival time; latencies include time queued before the engine saw a request");
  j.end_object();
  workload(j, r.config.workload);
  j.key("slo").begin_object().field("ttft_ms", r.config.slo.ttft_ms);
  j.field("tpot_ms", r.config.slo.tpot_ms).field("e2el_ms", r.config.slo.e2el_ms).end_object();
  j.key("variants").begin_array();
  for (const auto& v : r.variants) {
    j.begin_object()
        .field("name", v.name)
        .field("status", v.skip_reason.empty() ? "ok" : "skipped");
    if (!v.skip_reason.empty()) {
      j.field("skip_reason", v.skip_reason).field("wall_s", v.wall_s).end_object();
      continue;
    }
    j.field("remote", v.remote);
    if (v.remote) {
      j.key("model").null();
    } else {
      j.key("model").begin_object().field("path", v.model_path).field("arch", v.arch);
      j.field("params", v.params).field("active_params", v.active_params);
      j.field("bytes_per_token", v.bytes_per_token).end_object();
    }
    j.field("backend", v.backend).field("scheduler", v.scheduler).field("wall_s", v.wall_s);
    serving(j, "serving", v.serving);
    j.key("by_class").begin_object();
    serving(j, "simple", v.simple);
    serving(j, "complex", v.complex);
    j.end_object();
    if (v.remote)
      j.key("engine").null();  // only an in-process run sees the engine
    else
      engine(j, v.engine, v.log);
    j.key("knee");
    if (!v.knee.found) {
      j.null();
    } else {
      j.begin_object().field("rate", v.knee.rate).field("request_throughput", v.knee.throughput);
      j.field("ttft_ms", v.knee.ttft_ms).end_object();
    }
    j.key("sweep").begin_array();
    for (const auto& p : v.sweep) {
      j.begin_object().field("rate", p.rate).field("utilization", p.utilization);
      j.field("requests", p.requests).field("meets_slo", p.meets_slo);
      j.field("ttft_ms_at_percentile", p.ttft_ms).field("tpot_ms_at_percentile", p.tpot_ms);
      j.field("request_throughput", p.serving.request_throughput);
      j.field("output_throughput", p.serving.output_throughput);
      j.field("completed", p.serving.completed).field("failed", p.serving.failed);
      j.field("ttft_p90_ms", p.serving.ttft_ms.n ? p.serving.ttft_ms.p90 : NAN);
      j.field("e2el_p90_ms", p.serving.e2el_ms.n ? p.serving.e2el_ms.p90 : NAN);
      j.field("batch_size_mean", p.batch_mean).field("preemptions", p.preemptions);
      j.field("prefix_cache_hit_rate", p.prefix_hit_rate < 0 ? NAN : p.prefix_hit_rate);
      j.field("slo_latency_ms", p.slo_latency_s * 1e3).end_object();
    }
    j.end_array();
    if (v.capacity) capacity(j, *v.capacity);
    j.end_object();
  }
  j.end_array().end_object();
  return j.str();
}

}  // namespace sy::bench
