// switchyard bench: replay one workload against every variant of a compare config (or the
// embedded default), then write report.json, report.md and SVG plots and print the tables.
#include <cstdio>

#include "bench/bench_run.h"
#include "bench/compare_config.h"
#include "bench/default_compare.h"
#include "bench/progress.h"
#include "bench/report.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "host/log.h"

namespace sy::cli {

int cmd_bench(int argc, char** argv) {
  Args a(argc, argv, 2, {"config", "out", "log-level"}, {"help", "quiet"});
  if (a.has("help")) {
    std::printf(
        "usage: switchyard bench [--config compare.toml] [--out DIR] [--quiet] [--log-level L]\n"
        "replays the config's workload against each of its variants in turn and writes\n"
        "DIR/report.json, DIR/report.md and DIR/*.svg (DIR defaults to bench-out)\n"
        "without --config an embedded default compares the original and the optimized\n"
        "scheduler on a memory-bound dense/hybrid pair (dense-20m, hybrid-20m), sweeping the\n"
        "offered load past saturation and reporting each variant's knee\n");
    return 0;
  }
  const bench::CompareConfig cfg =
      a.has("config") ? bench::load_compare(a.str("config"))
                      : bench::parse_compare(bench::kDefaultCompare, bench::kDefaultCompareOrigin);
  set_log_level(a.str("log-level", cfg.log_level));
  bench::Progress progress(stderr, !a.has("quiet"));
  const bench::BenchReport report = bench::run_bench(cfg, progress);
  const auto files = bench::write_report(report, a.str("out", "bench-out"));
  std::fputs(bench::report_markdown(report).c_str(), stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "wrote %zu files to %s in %.1f s\n", files.size(),
               a.str("out", "bench-out").c_str(), report.run_time_s);
  for (const auto& v : report.variants)
    if (v.skip_reason.empty()) return 0;
  std::fprintf(stderr, "switchyard bench: no variant ran\n");
  return 1;
}

}  // namespace sy::cli
