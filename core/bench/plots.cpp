#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

#include "bench/report.h"
#include "bench/svg.h"
#include "switchyard/common/error.h"

namespace sy::bench {
namespace {

// Empirical CDF: the i-th smallest of n values at height (i+1)/n, as a step line.
Series cdf(const std::string& name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Series s{name, {}};
  if (!v.empty()) s.points.emplace_back(v.front(), 0.0);
  for (size_t i = 0; i < v.size(); ++i) s.points.emplace_back(v[i], double(i + 1) / v.size());
  return s;
}

std::vector<const VariantResult*> ran(const BenchReport& r) {
  std::vector<const VariantResult*> v;
  for (const auto& x : r.variants)
    if (x.skip_reason.empty()) v.push_back(&x);
  return v;
}

}  // namespace

std::vector<std::string> plot_files() {
  return {"ttft_cdf.svg",           "tpot_cdf.svg",     "itl_cdf.svg",     "e2el_cdf.svg",
          "throughput_vs_load.svg", "ttft_vs_load.svg", "queue_depth.svg", "batch_size_hist.svg"};
}

std::vector<std::pair<std::string, std::string>> report_plots(const BenchReport& r) {
  const auto vs = ran(r);
  std::vector<std::pair<std::string, std::string>> out;
  const std::pair<const char*, const char*> lat[] = {
      {"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2el", "E2E latency"}};
  for (const auto& [key, title] : lat) {
    LineChart c{std::string(title) + " CDF",
                std::string(title) + " (ms)",
                "fraction of requests",
                {},
                true,
                false};
    if (std::string(key) == "itl") c.y_label = "fraction of token gaps";
    for (const auto* v : vs) {
      const LatencySamples l = latency_samples(v->log);
      const std::string k = key;
      c.series.push_back(cdf(v->name, k == "ttft"   ? l.ttft
                                      : k == "tpot" ? l.tpot_multi_token()
                                      : k == "itl"  ? l.itl
                                                    : l.e2el));
    }
    out.emplace_back(std::string(key) + "_cdf.svg", render_svg(c));
  }
  // Against offered load, in the order of the load (the sweep may have run them otherwise).
  auto by_load = [&](const char* title, const char* y, auto value) {
    LineChart c{title, "offered load (req/s)", y, {}, false, true};
    for (const auto* v : vs) {
      Series s{v->name, {}};
      for (const auto& p : v->sweep)
        if (std::isfinite(value(p))) s.points.emplace_back(p.rate, value(p));
      std::sort(s.points.begin(), s.points.end());
      c.series.push_back(s);
    }
    return render_svg(c);
  };
  out.emplace_back("throughput_vs_load.svg",
                   by_load("Request throughput vs offered load", "completed requests/s",
                           [](const SweepPoint& p) { return p.serving.request_throughput; }));
  const std::string p99 = "TTFT p" + std::to_string(int(r.config.sweep.percentile));
  out.emplace_back("ttft_vs_load.svg",
                   by_load((p99 + " vs offered load").c_str(), (p99 + " (ms)").c_str(),
                           [](const SweepPoint& p) { return p.ttft_ms; }));
  LineChart q{"Queue depth over time (main run)",
              "time since start (s)",
              "waiting requests",
              {},
              true,
              false};
  for (const auto* v : vs) {
    Series s{v->name, {}};
    for (const auto& st : v->log.steps)
      s.points.emplace_back((st.t_ns - v->log.start_ns) / 1e9, st.n_waiting);
    q.series.push_back(s);
  }
  out.emplace_back("queue_depth.svg", render_svg(q));
  BarChart b{
      "Batch size distribution (main run)", "sequences in the step", "share of steps (%)", {}, {}};
  uint32_t max_b = 0;
  for (const auto* v : vs)
    if (!v->engine.batch_hist.empty())
      max_b = std::max(max_b, v->engine.batch_hist.rbegin()->first);
  for (uint32_t k = 1; k <= max_b; ++k) b.categories.push_back(std::to_string(k));
  for (const auto* v : vs) {
    std::vector<double> share(max_b, 0.0);
    for (const auto& [k, n] : v->engine.batch_hist) share[k - 1] = 100.0 * n / v->engine.steps;
    b.groups.emplace_back(v->name, share);
  }
  out.emplace_back("batch_size_hist.svg", render_svg(b));
  return out;
}

std::vector<std::filesystem::path> write_report(const BenchReport& r,
                                                const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::filesystem::path> written;
  auto put = [&](const std::string& name, const std::string& text) {
    const auto p = dir / name;
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out) throw sy::Error(SY_ERR_UNAVAILABLE, p.string() + ": cannot write");
    written.push_back(p);
  };
  put("report.json", report_json(r));
  put("report.md", report_markdown(r));
  for (const auto& [name, svg] : report_plots(r)) put(name, svg);
  return written;
}

}  // namespace sy::bench
