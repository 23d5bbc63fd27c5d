#include "bench/bench_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bench/driver.h"
#include "bench/http_driver.h"
#include "bench/progress.h"
#include "host/host_api.h"

namespace sy::bench {

double latency_quantile(const RunLog& log, const std::string& metric, double p) {
  const LatencySamples s = latency_samples(log);
  std::vector<double> v = metric == "ttft" ? s.ttft : metric == "tpot" ? s.tpot : s.e2el;
  for (auto& x : v) x /= 1e3;
  for (const auto& r : log.requests)  // never finished: later than any SLO
    if (!r.ok && r.error.rfind("refused", 0) != 0)
      v.push_back(std::numeric_limits<double>::infinity());
  if (v.empty()) return std::numeric_limits<double>::infinity();
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, p);
}

double offered_rate(const std::vector<WorkItem>& items) {
  if (items.empty() || items.back().arrival_ns <= 0) return std::numeric_limits<double>::infinity();
  return items.size() / (items.back().arrival_ns / 1e9);
}

namespace {

// Squared coefficient of variation of the inter-arrival gaps: the model's value for synthetic
// arrivals (Gamma(b): 1/b), the measured one for a trace.
double arrival_ca2(const WorkloadSpec& w, const std::vector<WorkItem>& items) {
  if (w.arrival == WorkloadSpec::Arrival::poisson) return 1.0;
  if (w.arrival == WorkloadSpec::Arrival::gamma)
    return std::isinf(w.burstiness) ? 0.0 : 1.0 / w.burstiness;
  std::vector<double> gaps;
  for (size_t i = 1; i < items.size(); ++i)
    gaps.push_back((items[i].arrival_ns - items[i - 1].arrival_ns) / 1e9);
  const Summary s = summarize(gaps);
  return s.n && s.mean > 0 ? (s.std * s.std) / (s.mean * s.mean) : 1.0;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

class Runner {
 public:
  Runner(const CompareConfig& cfg, Progress& progress) : cfg_(cfg), progress_(progress) {}

  // A fresh engine per replay: no run inherits another's cache contents or queue.
  RunLog replay_fresh(const VariantSpec& v, const std::vector<WorkItem>& items,
                      const std::string& label) {
    DriverOptions o;
    o.timeout_s = cfg_.run.timeout_s;
    o.warmup_requests = cfg_.run.warmup_requests;
    o.on_progress = [this](size_t done, size_t) { progress_.update(done); };
    progress_.begin(label, items.size());
    RunLog log;
    if (!v.endpoint.empty()) {
      log = replay_http(v.endpoint, v.served_model, items, o);
    } else {
      auto variant = engine::Variant::build(v.config);
      log = replay(*variant, items, o);
    }
    size_t ok = 0;
    for (const auto& r : log.requests) ok += r.ok;
    progress_.end(std::to_string(ok) + "/" + std::to_string(items.size()) + " requests in " +
                  fmt("%.1f s", (log.end_ns - log.start_ns) / 1e9) +
                  (log.timed_out ? " (timed out)" : ""));
    return log;
  }

  void run_variant(const VariantSpec& v, const std::vector<WorkItem>& items, VariantResult& out) {
    out.remote = !v.endpoint.empty();
    if (out.remote) {
      out.arch = "server";
      out.backend = v.endpoint;
      out.scheduler = "(server's)";
    } else {
      auto probe = engine::Variant::build(v.config);  // also writes a missing model file
      const auto& mi = probe->model->info();
      out.arch = mi.arch;
      out.params = mi.n_params;
      out.active_params = mi.n_active_params;
      out.bytes_per_token = mi.bytes_per_token;
      out.backend = probe->backend_plugin->name();
      out.scheduler = probe->scheduler->name();
      out.model_path = v.config.model.path;
    }
    out.log = replay_fresh(v, items, "[" + v.name + "] main");
    out.serving = serving_metrics(out.log, cfg_.slo);
    out.simple =
        serving_metrics(out.log, cfg_.slo, [](const RequestRecord& r) { return r.simple; });
    out.complex =
        serving_metrics(out.log, cfg_.slo, [](const RequestRecord& r) { return !r.simple; });
    out.engine = engine_metrics(out.log, out.active_params);
    const std::string metric = cfg_.capacity ? cfg_.capacity->metric : "ttft";
    const double pct = cfg_.capacity ? cfg_.capacity->percentile : 90;
    if (cfg_.sweep.enabled) {
      SweepPlanner planner(cfg_.sweep);
      while (const auto rate = planner.next(out.sweep)) {
        const uint32_t n = planner.requests_at(*rate);
        const auto w = at_rate(cfg_.workload, *rate, n);
        const RunLog log = replay_fresh(v, generate_workload(w),
                                        "[" + v.name + "] sweep " + fmt("%.3g req/s", *rate));
        SweepPoint p;
        p.rate = *rate;
        p.requests = n;
        p.serving = serving_metrics(log, cfg_.slo);
        const EngineMetrics em = engine_metrics(log, out.active_params);
        p.utilization = em.utilization;
        p.batch_mean = em.batch_size.mean;
        p.preemptions = em.preemptions;
        p.prefix_hit_rate = em.prefix_cache_hit_rate.value_or(-1);
        p.slo_latency_s = latency_quantile(log, metric, pct);
        const double q = cfg_.sweep.percentile;
        p.ttft_ms = latency_quantile(log, "ttft", q) * 1e3;
        p.tpot_ms = latency_quantile(log, "tpot", q) * 1e3;
        p.e2el_ms = latency_quantile(log, "e2el", q) * 1e3;
        p.meets_slo = meets_slo(p, cfg_.slo);
        out.sweep.push_back(p);
      }
      out.knee = find_knee(out.sweep);
    }
    // The capacity model needs the engine's busy time, which only an in-process run measures.
    if (cfg_.capacity && !out.remote) out.capacity = capacity(v, items, out);
  }

 private:
  CapacityResult capacity(const VariantSpec& v, const std::vector<WorkItem>& items,
                          const VariantResult& res) {
    const CapacitySpec& spec = *cfg_.capacity;
    CapacityResult c;
    c.spec = spec;
    std::vector<double> simple, complex;
    for (const auto& r : res.log.requests)
      if (r.ok) (r.simple ? simple : complex).push_back(r.cost_ns / 1e9);
    std::vector<LoadPoint> points;
    const double main_rate = offered_rate(items);
    if (std::isfinite(main_rate))
      points.push_back({main_rate, latency_quantile(res.log, spec.metric, spec.percentile),
                        res.engine.utilization});
    for (const auto& p : res.sweep) points.push_back({p.rate, p.slo_latency_s, p.utilization});
    c.model = fit_capacity(simple, complex, spec.simple_ratio.value_or(cfg_.workload.simple_ratio),
                           arrival_ca2(cfg_.workload, items), points);
    c.estimate = estimate_replicas(c.model, spec.target_rate, spec.slo_ms / 1e3);
    if (spec.validate && c.estimate.replicas > 0) {
      WorkloadSpec w =
          at_rate(cfg_.workload, spec.target_rate / c.estimate.replicas, spec.requests);
      if (spec.simple_ratio) w.simple_ratio = *spec.simple_ratio;
      const RunLog log = replay_fresh(
          v, generate_workload(w), "[" + v.name + "] capacity check " + fmt("%.3g req/s", w.rate));
      c.validated = true;
      c.validation_rate = w.rate;
      c.measured_latency_s = latency_quantile(log, spec.metric, spec.percentile);
      c.meets_slo = c.measured_latency_s <= spec.slo_ms / 1e3;
    }
    return c;
  }

  const CompareConfig& cfg_;
  Progress& progress_;
};

}  // namespace

BenchReport run_bench(const CompareConfig& cfg, Progress& progress) {
  BenchReport rep;
  rep.config = cfg;
  const int64_t t0 = now_ns();
  const std::vector<WorkItem> items = generate_workload(cfg.workload);
  Runner runner(cfg, progress);
  for (const auto& v : cfg.variants) {
    VariantResult res;
    res.name = v.name;
    const int64_t tv = now_ns();
    try {
      runner.run_variant(v, items, res);
    } catch (const std::exception& e) {
      // A variant whose plugin or model is not there (yet) is reported, not fatal.
      res = VariantResult{};
      res.name = v.name;
      res.skip_reason = e.what();
      progress.note("[" + v.name + "] skipped: " + res.skip_reason);
    }
    res.wall_s = (now_ns() - tv) / 1e9;
    rep.variants.push_back(std::move(res));
  }
  rep.run_time_s = (now_ns() - t0) / 1e9;
  return rep;
}

}  // namespace sy::bench
