#include <climits>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "bench/report.h"
#include "bench/sweep.h"

namespace sy::bench {
namespace {

std::string f(const char* format, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string opt(const char* format, const std::optional<double>& v) {
  return v ? f(format, *v) : "n/a";
}
std::string quad(const Summary& s) {  // mean / p50 / p90 / p99
  if (!s.n) return "n/a";
  return f("%.1f", s.mean) + " / " + f("%.1f", s.p50) + " / " + f("%.1f", s.p90) + " / " +
         f("%.1f", s.p99);
}
std::string bytes(double b) {
  if (b >= 1 << 20) return f("%.2f MiB", b / (1 << 20));
  return f("%.1f KiB", b / 1024);
}
std::string path_name(uint32_t p) {
  return p == 0 ? "full" : p == 1 ? "light" : "path " + std::to_string(p);
}

// One table: a row per metric, a column per variant (skipped variants show "skipped"; in an
// engine-side table, variants replayed over HTTP show "n/a (HTTP)").
class Table {
 public:
  explicit Table(const BenchReport& r, bool engine_side = false)
      : r_(r), engine_side_(engine_side) {}
  template <typename Fn>
  void row(const std::string& label, Fn cell) {
    std::string line = "| " + label + " |";
    for (const auto& v : r_.variants)
      line += " " +
              (!v.skip_reason.empty()     ? std::string("skipped")
               : engine_side_ && v.remote ? std::string("n/a (HTTP)")
                                          : cell(v)) +
              " |";
    rows_.push_back(line);
  }
  std::string str(const std::string& first) const {
    std::string s = "| " + first + " |", sep = "|---|";
    for (const auto& v : r_.variants) {
      s += " " + v.name + " |";
      sep += "---|";
    }
    s += "\n" + sep + "\n";
    for (const auto& l : rows_) s += l + "\n";
    return s;
  }

 private:
  const BenchReport& r_;
  bool engine_side_;
  std::vector<std::string> rows_;
};

std::string slo_text(const Slo& s) {
  std::string t;
  if (s.ttft_ms) t += "TTFT <= " + f("%g", *s.ttft_ms) + " ms";
  if (s.tpot_ms) t += std::string(t.empty() ? "" : ", ") + "TPOT <= " + f("%g", *s.tpot_ms) + " ms";
  if (s.e2el_ms) t += std::string(t.empty() ? "" : ", ") + "E2EL <= " + f("%g", *s.e2el_ms) + " ms";
  return t.empty() ? "no SLO set" : t;
}

std::string workload_text(const WorkloadSpec& w) {
  std::ostringstream o;
  if (w.arrival == WorkloadSpec::Arrival::trace) {
    o << "trace " << w.trace_path
      << (w.rate > 0 ? " at " + f("%g", w.rate) + " req/s" : " as recorded");
  } else {
    o << w.requests << " requests, "
      << (w.arrival == WorkloadSpec::Arrival::poisson
              ? "Poisson"
              : "gamma (burstiness " + f("%g", w.burstiness) + ")")
      << " arrivals at " << f("%g", w.rate) << " req/s";
  }
  o << ", " << f("%.0f", w.simple_ratio * 100) << "% simple, "
    << f("%.0f", w.shared_prefix_ratio * 100) << "% with a shared " << w.shared_prefix_len
    << "-token prefix, seed " << w.seed;
  return o.str();
}

}  // namespace

std::string report_markdown(const BenchReport& r) {
  const auto& cfg = r.config;
  std::ostringstream o;
  o << "# Switchyard bench report\n\n"
    << "Config `" << cfg.origin << "`; workload: " << workload_text(cfg.workload) << ". Run time "
    << f("%.1f", r.run_time_s) << " s.\n\n"
    << "Metrics as `vllm bench serve` defines them; percentiles with numpy's linear interpolation; "
       "latencies count from the scheduled arrival. Cells with four numbers are mean / p50 / p90 / "
       "p99.\n\n";
  if (cfg.sweep.enabled) {
    std::vector<std::pair<std::string, Knee>> knees;
    for (const auto& v : r.variants)
      if (v.skip_reason.empty()) knees.emplace_back(v.name, v.knee);
    o << "**" << knee_headline(knees, cfg.slo, cfg.sweep.percentile) << "**\n\n";
  }

  Table s(r);
  s.row("model (params)", [](const VariantResult& v) {
    return v.remote ? v.arch : v.arch + " " + f("%.2fM", v.params / 1e6);
  });
  s.row("backend / scheduler",
        [](const VariantResult& v) { return v.backend + " / " + v.scheduler; });
  s.row("completed / failed", [](const VariantResult& v) {
    return std::to_string(v.serving.completed) + " / " + std::to_string(v.serving.failed);
  });
  s.row("duration (s)", [](const VariantResult& v) { return f("%.2f", v.serving.duration_s); });
  s.row("request throughput (req/s)",
        [](const VariantResult& v) { return f("%.2f", v.serving.request_throughput); });
  s.row("output throughput (tok/s)",
        [](const VariantResult& v) { return f("%.1f", v.serving.output_throughput); });
  s.row("total token throughput (tok/s)",
        [](const VariantResult& v) { return f("%.1f", v.serving.total_token_throughput); });
  s.row("goodput (req/s; " + slo_text(cfg.slo) + ")", [](const VariantResult& v) {
    return opt("%.2f", v.serving.request_goodput) +
           (v.serving.request_goodput ? " (" + std::to_string(v.serving.good_requests) + " good)"
                                      : "");
  });
  s.row("TTFT (ms)", [](const VariantResult& v) { return quad(v.serving.ttft_ms); });
  s.row("TPOT (ms)", [](const VariantResult& v) { return quad(v.serving.tpot_ms); });
  s.row("ITL (ms)", [](const VariantResult& v) { return quad(v.serving.itl_ms); });
  s.row("E2EL (ms)", [](const VariantResult& v) { return quad(v.serving.e2el_ms); });
  s.row("TTFT p90 simple / complex (ms)", [](const VariantResult& v) {
    return (v.simple.ttft_ms.n ? f("%.1f", v.simple.ttft_ms.p90) : "n/a") + " / " +
           (v.complex.ttft_ms.n ? f("%.1f", v.complex.ttft_ms.p90) : "n/a");
  });
  s.row("E2EL p90 simple / complex (ms)", [](const VariantResult& v) {
    return (v.simple.e2el_ms.n ? f("%.1f", v.simple.e2el_ms.p90) : "n/a") + " / " +
           (v.complex.e2el_ms.n ? f("%.1f", v.complex.e2el_ms.p90) : "n/a");
  });
  s.row("max output tok/s (1 s buckets)",
        [](const VariantResult& v) { return f("%.0f", v.serving.max_output_tokens_per_s); });
  s.row("max concurrent requests",
        [](const VariantResult& v) { return std::to_string(v.serving.max_concurrent_requests); });
  o << "## Serving\n\n" << s.str("metric") << "\n";

  Table e(r, true);
  e.row("queue depth mean / max", [](const VariantResult& v) {
    return f("%.2f", v.engine.queue_mean) + " / " + std::to_string(v.engine.queue_max);
  });
  e.row("batch size mean / p50 / max", [](const VariantResult& v) {
    const Summary& b = v.engine.batch_size;
    return b.n ? f("%.2f", b.mean) + " / " + f("%g", b.p50) + " / " + f("%g", b.max) : "n/a";
  });
  e.row("steps (busy s, utilization)", [](const VariantResult& v) {
    return std::to_string(v.engine.steps) + " (" + f("%.2f", v.engine.busy_s) + " s, " +
           f("%.0f%%", v.engine.utilization * 100) + ")";
  });
  e.row("preemptions", [](const VariantResult& v) { return std::to_string(v.engine.preemptions); });
  e.row("prefix-cache hit rate", [](const VariantResult& v) {
    return v.engine.prefix_cache_hit_rate ? f("%.1f%%", *v.engine.prefix_cache_hit_rate * 100)
                                          : "n/a";
  });
  e.row("path split", [](const VariantResult& v) {
    size_t total = 0;
    for (const auto& [p, n] : v.engine.path_requests) total += n;
    std::string t;
    for (const auto& [p, n] : v.engine.path_requests)
      t += (t.empty() ? "" : ", ") + path_name(p) + " " + f("%.0f%%", 100.0 * n / total);
    return t.empty() ? "n/a" : t;
  });
  e.row("routing time share", [](const VariantResult& v) {
    return v.engine.routing_time_share ? f("%.2f%%", *v.engine.routing_time_share * 100) : "n/a";
  });
  e.row("host planning hidden by overlap (share of busy)", [](const VariantResult& v) {
    return v.engine.overlap_hidden_share ? f("%.2f%%", *v.engine.overlap_hidden_share * 100)
                                         : "n/a";
  });
  e.row("expert activation share max / min", [](const VariantResult& v) {
    return v.engine.experts ? f("%.1f%%", v.engine.experts->max_share * 100) + " / " +
                                  f("%.1f%%", v.engine.experts->min_share * 100)
                            : "n/a";
  });
  e.row("peak memory (KV in use + state)", [](const VariantResult& v) {
    const auto& m = v.engine.memory;
    return bytes(m.peak_bytes) + " (" + std::to_string(m.peak_kv_blocks) + " blocks x " +
           bytes(m.kv_block_bytes) +
           (m.kv_window_block_bytes
                ? " + " + std::to_string(m.peak_kv_window_blocks) + " sliding-window blocks x " +
                      bytes(m.kv_window_block_bytes)
                : "") +
           (m.state_bytes_per_seq ? " + " + bytes(m.state_bytes_per_seq) + "/seq state" : "") +
           (m.peak_snapshots ? ", " + std::to_string(m.peak_snapshots) + " snapshots" : "") + ")";
  });
  e.row("peak memory per path", [](const VariantResult& v) {
    std::string t;
    for (const auto& [p, b] : v.engine.memory.peak_by_path)
      t += (t.empty() ? "" : ", ") + path_name(p) + " " + bytes(b);
    return t.empty() ? "n/a" : t;
  });
  e.row("state snapshots (hybrid prefix cache): peak / budget", [](const VariantResult& v) {
    const auto& m = v.engine.memory;
    if (!m.state_snapshot_slots) return std::string("n/a");
    return std::to_string(m.peak_snapshots) + " / " + std::to_string(m.state_snapshot_slots) +
           " slots x " + bytes(m.state_bytes_per_seq) + " (budget " +
           bytes(double(m.state_snapshot_slots) * m.state_bytes_per_seq) + ")";
  });
  e.row("step time predicted / measured (ms) by tokens per step", [](const VariantResult& v) {
    std::string t;
    for (const auto& b : v.engine.cost_fit)
      t += (t.empty() ? "" : ", ") +
           (b.min_tokens == b.max_tokens ? std::to_string(b.min_tokens)
            : b.max_tokens == UINT32_MAX
                ? std::to_string(b.min_tokens) + "+"
                : std::to_string(b.min_tokens) + "-" + std::to_string(b.max_tokens)) +
           ": " + f("%.1f", b.predicted_ms) + " / " + f("%.1f", b.measured_ms);
    return t.empty() ? std::string("n/a")
                     : t + " (mean error " + f("%.0f%%", v.engine.cost_fit_error * 100) + ")";
  });
  e.row("compute per request (GFLOP, 2 x active params x tokens)",
        [](const VariantResult& v) { return f("%.3f", v.engine.flops_per_request / 1e9); });
  e.row("busy time per request (ms)",
        [](const VariantResult& v) { return quad(v.engine.cost_ms); });
  o << "## Engine\n\n" << e.str("metric") << "\n";

  if (cfg.sweep.enabled) {
    const std::string pct = "p" + f("%g", cfg.sweep.percentile);
    o << "## Offered-load sweep\n\n"
      << (cfg.sweep.rates.empty()
              ? "Automatic: from " + f("%g", cfg.sweep.start) + " req/s, x" +
                    f("%g", cfg.sweep.factor) +
                    " per point until throughput stops rising past the first point that misses "
                    "the SLO, then " +
                    std::to_string(cfg.sweep.refine) +
                    " bisecting between the knee and the next load up"
              : std::string("The configured rates"))
      << "; the knee (bold) is the highest throughput among the points meeting the SLO ("
      << slo_text(cfg.slo) << " at " << pct << "). Points in the order they ran.\n\n"
      << "| variant | offered (req/s) | requests | throughput (req/s) | output tok/s | TTFT " << pct
      << " (ms) | TPOT " << pct << " (ms) | busy | batch | preempt | prefix hits | SLO |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& v : r.variants)
      for (const auto& p : v.sweep) {
        const bool knee = v.knee.found && p.rate == v.knee.rate;
        const std::string tput = f("%.2f", p.serving.request_throughput);
        o << "| " << v.name << " | " << f("%.3g", p.rate) << " | " << p.requests << " | "
          << (knee ? "**" + tput + "**" : tput) << " | " << f("%.0f", p.serving.output_throughput)
          << " | " << f("%.0f", p.ttft_ms) << " | " << f("%.0f", p.tpot_ms) << " | "
          << f("%.0f%%", p.utilization * 100) << " | " << f("%.1f", p.batch_mean) << " | "
          << p.preemptions << " | "
          << (p.prefix_hit_rate < 0 ? std::string("n/a") : f("%.0f%%", p.prefix_hit_rate * 100))
          << " | " << (p.meets_slo ? "met" : "missed") << " |\n";
      }
    o << "\n";
  }

  if (cfg.capacity) {
    const CapacitySpec& c = *cfg.capacity;
    Table k(r, true);
    auto cap = [](const VariantResult& v) -> const CapacityResult& { return *v.capacity; };
    k.row("busy time per request, simple / complex (ms)", [&](const VariantResult& v) {
      const auto& m = cap(v).model;
      return (m.simple_cost_s.n ? f("%.1f", m.simple_cost_s.mean * 1e3) : "n/a") + " / " +
             (m.complex_cost_s.n ? f("%.1f", m.complex_cost_s.mean * 1e3) : "n/a");
    });
    k.row("mix demand D (ms), c_s^2, c_a^2", [&](const VariantResult& v) {
      const auto& m = cap(v).model;
      return f("%.1f", m.demand_s * 1e3) + ", " + f("%.2f", m.cs2) + ", " + f("%.2f", m.ca2);
    });
    k.row("fit: T0 (ms), kappa (points)", [&](const VariantResult& v) {
      const auto& m = cap(v).model;
      return f("%.1f", m.t0_s * 1e3) + ", " + f("%.2f", m.kappa) + " (" +
             std::to_string(m.fit_points) + ")";
    });
    k.row("max rate per replica (req/s)",
          [&](const VariantResult& v) { return f("%.2f", cap(v).estimate.per_replica_rate); });
    k.row("replicas for " + f("%g", c.target_rate) + " req/s", [&](const VariantResult& v) {
      const auto& e = cap(v).estimate;
      return e.replicas ? std::to_string(e.replicas) : "infeasible: " + e.reason;
    });
    k.row("predicted " + c.metric + " p" + f("%g", c.percentile) + " at target / replicas (ms)",
          [&](const VariantResult& v) {
            return f("%.1f", cap(v).estimate.predicted_latency_s * 1e3);
          });
    k.row("measured there (ms)", [&](const VariantResult& v) {
      const auto& x = cap(v);
      return x.validated
                 ? f("%.1f", x.measured_latency_s * 1e3) + " at " + f("%.2f", x.validation_rate) +
                       " req/s, " + (x.meets_slo ? "meets SLO" : "misses SLO")
                 : std::string("not run");
    });
    o << "## Capacity (" << c.metric << " p" << f("%g", c.percentile) << " <= " << f("%g", c.slo_ms)
      << " ms at " << f("%g", c.target_rate) << " req/s, "
      << f("%.0f", c.simple_ratio.value_or(cfg.workload.simple_ratio) * 100) << "% simple)\n\n"
      << k.str("") << "\n";
  }

  bool any_skipped = false;
  for (const auto& v : r.variants)
    if (!v.skip_reason.empty()) {
      if (!any_skipped) o << "## Skipped\n\n";
      any_skipped = true;
      o << "- " << v.name << ": skipped: " << v.skip_reason << "\n";
    }
  if (any_skipped) o << "\n";
  o << "## Plots\n\n";
  for (const auto& file : plot_files()) o << "- [" << file << "](" << file << ")\n";
  return o.str();
}

}  // namespace sy::bench
