// switchyard bench: replay one workload against every variant of a compare config (or the
// embedded default), then write report.json, report.md and SVG plots and print the tables.
#include <cstdio>

#include <filesystem>
#include <fstream>

#include "bench/bench_run.h"
#include "bench/cluster_bench.h"
#include "bench/compare_config.h"
#include "bench/default_compare.h"
#include "bench/progress.h"
#include "bench/report.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "host/log.h"

namespace sy::cli {
namespace {

// bench --endpoint: the model from one in-process variant, then the cluster behind URL.
int cluster_bench(const Args& a, bench::CompareConfig cfg, const std::string& out) {
  const std::string endpoint = bench::completions_url(a.str("endpoint"));  // checks the URL
  const int64_t replicas = a.integer("replicas", 1);
  if (replicas < 1 || replicas > 1024) throw UsageError("--replicas must be in [1, 1024]");
  if (!cfg.capacity)
    throw UsageError(cfg.origin +
                     ": bench --endpoint needs a [capacity] table (the target load "
                     "and SLO the model predicts replicas for)");
  std::vector<bench::VariantSpec> local;
  for (const auto& v : cfg.variants)
    if (v.endpoint.empty() && (!a.has("variant") || v.name == a.str("variant"))) local.push_back(v);
  if (local.empty())
    throw UsageError(a.has("variant") ? "no in-process variant named '" + a.str("variant") + "'"
                                      : cfg.origin + ": no in-process variant to fit the model on");
  cfg.variants = {local.front()};
  bench::Progress progress(stderr, !a.has("quiet"));
  const bench::BenchReport report = bench::run_bench(cfg, progress);
  bench::write_report(report, out);
  const bench::VariantResult& v = report.variants.front();
  if (!v.skip_reason.empty())
    throw std::runtime_error("variant '" + v.name + "': " + v.skip_reason);
  bench::ClusterRow row = bench::measure_cluster(cfg, v.name, *v.capacity, endpoint,
                                                 static_cast<uint32_t>(replicas), progress);
  const auto rows = bench::merge_cluster_rows(std::filesystem::path(out) / "cluster.json", row);
  bench::write_cluster_rows(std::filesystem::path(out) / "cluster.json", rows);
  const std::string md = bench::cluster_markdown(rows);
  std::ofstream(std::filesystem::path(out) / "cluster.md") << md;
  std::fputs(bench::report_markdown(report).c_str(), stdout);
  std::fputs(("\n" + md).c_str(), stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "wrote %s/cluster.md and cluster.json (%zu replica counts)\n", out.c_str(),
               rows.size());
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args a(argc, argv, 2, {"config", "out", "log-level", "endpoint", "replicas", "variant"},
         {"help", "quiet"});
  if (a.has("help")) {
    std::printf(
        "usage: switchyard bench [--config compare.toml] [--out DIR] [--quiet] [--log-level L]\n"
        "       switchyard bench --endpoint URL [--replicas N] [--variant NAME] [--config ...]\n"
        "replays the config's workload against each of its variants in turn and writes\n"
        "DIR/report.json, DIR/report.md and DIR/*.svg (DIR defaults to bench-out)\n"
        "without --config an embedded default compares the original and the optimized\n"
        "scheduler on a memory-bound dense/hybrid pair (dense-20m, hybrid-20m), sweeping the\n"
        "offered load past saturation and reporting each variant's knee\n"
        "--endpoint: fit the capacity model on one in-process variant (--variant, default the\n"
        "first), then drive the cluster frontend at URL (N replicas behind it) and compare;\n"
        "DIR/cluster.md and DIR/cluster.json keep one row per replica count measured\n");
    return 0;
  }
  bench::CompareConfig cfg =
      a.has("config") ? bench::load_compare(a.str("config"))
                      : bench::parse_compare(bench::kDefaultCompare, bench::kDefaultCompareOrigin);
  set_log_level(a.str("log-level", cfg.log_level));
  const std::string out = a.str("out", "bench-out");
  if (a.has("endpoint")) return cluster_bench(a, cfg, out);
  bench::Progress progress(stderr, !a.has("quiet"));
  const bench::BenchReport report = bench::run_bench(cfg, progress);
  const auto files = bench::write_report(report, out);
  std::fputs(bench::report_markdown(report).c_str(), stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "wrote %zu files to %s in %.1f s\n", files.size(), out.c_str(),
               report.run_time_s);
  for (const auto& v : report.variants)
    if (v.skip_reason.empty()) return 0;
  std::fprintf(stderr, "switchyard bench: no variant ran\n");
  return 1;
}

}  // namespace sy::cli
