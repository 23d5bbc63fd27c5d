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
#include "cli/commands.h"
#include "cli/options.h"
#include "host/log.h"
#include "switchyard/common/error.h"

namespace sy::cli {
namespace {

struct BenchOptions {
  std::string config, out = "bench-out", log_level, endpoint, variant;
  uint32_t replicas = 1;
  bool quiet = false;
};

// bench --endpoint: the model from one in-process variant, then the cluster behind URL.
int cluster_bench(const BenchOptions& a, bench::CompareConfig cfg, const std::string& out) {
  const std::string endpoint = bench::completions_url(a.endpoint);  // checks the URL
  const uint32_t replicas = a.replicas;
  if (!cfg.capacity)
    throw UsageError(cfg.origin +
                     ": bench --endpoint needs a [capacity] table (the target load "
                     "and SLO the model predicts replicas for)");
  std::vector<bench::VariantSpec> local;
  for (const auto& v : cfg.variants)
    if (v.endpoint.empty() && (a.variant.empty() || v.name == a.variant)) local.push_back(v);
  if (local.empty())
    throw UsageError(!a.variant.empty()
                         ? "no in-process variant named '" + a.variant + "'"
                         : cfg.origin + ": no in-process variant to fit the model on");
  cfg.variants = {local.front()};
  bench::Progress progress(stderr, !a.quiet);
  const bench::BenchReport report = bench::run_bench(cfg, progress);
  bench::write_report(report, out);
  const bench::VariantResult& v = report.variants.front();
  if (!v.skip_reason.empty()) throw sy::Error("variant '" + v.name + "': " + v.skip_reason);
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
  Command app(
      "bench",
      "Replays the config's workload against each of its variants in turn and writes "
      "DIR/report.json, DIR/report.md and DIR/*.svg. Without --config an embedded default "
      "compares the original and the optimized scheduler on a memory-bound dense/hybrid pair "
      "(qwen3-20m, qwen35moe-20m), sweeping the offered load past saturation and reporting each "
      "variant's knee. With --endpoint: fit the capacity model on one in-process variant, then "
      "drive the cluster frontend at URL (N replicas behind it) and compare; DIR/cluster.md "
      "and DIR/cluster.json keep one row per replica count measured.");
  BenchOptions a;
  app.add_option("--config", a.config, "compare config (TOML)");
  app.add_option("--out", a.out, "report folder (DIR)");
  app.add_flag("--quiet", a.quiet, "no progress lines");
  app.add_option("--log-level", a.log_level,
                 "trace, debug, info, warn, error (default: the config's)");
  app.add_option("--endpoint", a.endpoint, "a cluster frontend's URL (http://host:port)");
  app.add_option("--replicas", a.replicas, "replicas behind --endpoint")
      ->check(CLI::Range(1, 1024));
  app.add_option("--variant", a.variant, "the in-process variant to fit on (default: the first)");
  if (!parse(app, argc, argv)) return 0;
  bench::CompareConfig cfg = !a.config.empty() ? bench::load_compare(a.config)
                                               : bench::parse_compare(bench::kDefaultCompare,
                                                                      bench::kDefaultCompareOrigin);
  set_log_level(!a.log_level.empty() ? a.log_level : cfg.log_level);
  const std::string out = a.out;
  if (!a.endpoint.empty()) return cluster_bench(a, cfg, out);
  bench::Progress progress(stderr, !a.quiet);
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
