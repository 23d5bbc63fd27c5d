// switchyard bench-hardening: starts `switchyard serve` (this binary, or --exe another one, such
// as main's build, for a before/after figure in one run) in a child process on a free loopback
// port and measures it from outside: /health latency while --slow slow-loris connections stay
// open, then its resident memory before, during and after --bad mixed bad requests, with the
// status codes they got. Exit status 1 when /health missed its 1 s or the server stopped serving.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/hardening_bench.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace sy::cli {
namespace {

// Keys every build of `switchyard serve` reads, so main's binary can serve it too.
constexpr const char* kDefaultServe = R"(
[serve]
max_queue = 256
request_timeout_s = 60

[model]
path = "models/dense-tiny.gguf"
generate = "dense-tiny"

[backend]
plugin = "cpu_ref"

[scheduler]
plugin = "dynamic"
)";

}  // namespace

int cmd_bench_hardening(int argc, char** argv) {
  Command app("bench-hardening",
              "Serves X.toml (default: dense-tiny on cpu_ref) from a child process and reports "
              "/health latency while N slow connections are open, and resident memory around the "
              "bad requests.");
  bench::HardeningOptions o;
  app.add_option("--config", o.config, "the serve config (X.toml)");
  app.add_option("--exe", o.exe, "the switchyard binary to serve with (default: this one)");
  app.add_option("--slow", o.slow, "slow connections held open during the /health probes")
      ->check(CLI::Range(0, 100000));
  app.add_option("--probes", o.probes, "/health requests while they are open (one per 200 ms)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--bad", o.bad, "bad requests")->check(CLI::Range(0, 10000000));
  app.add_option("--clients", o.clients, "threads sending them")->check(CLI::Range(1, 1024));
  if (!parse(app, argc, argv)) return 0;
  if (o.exe.empty()) o.exe = std::filesystem::canonical("/proc/self/exe").string();
  if (o.config.empty()) {
    o.config =
        (std::filesystem::temp_directory_path() / "switchyard-bench-hardening.toml").string();
    std::ofstream(o.config) << kDefaultServe;
  }
  o.log_path = (std::filesystem::temp_directory_path() / "switchyard-bench-hardening.log").string();
  std::printf("server: %s serve --config %s (log %s)\n", o.exe.c_str(), o.config.c_str(),
              o.log_path.c_str());
  std::fflush(stdout);
  const bench::HardeningReport r = bench::run_hardening_bench(o);

  std::vector<double> ok;
  uint32_t missed = 0;
  for (double ms : r.health_ms)
    (ms < 0 || ms > 1000 ? ++missed : 0), ok.push_back(ms < 0 ? 5000 : ms);
  std::sort(ok.begin(), ok.end());
  auto pct = [&](double q) {
    return ok.empty() ? 0.0 : ok[std::min(ok.size() - 1, size_t(q * ok.size()))];
  };
  std::printf(
      "/health with %u slow connections open (at least %u open at each check, %u reopened "
      "after the server dropped them): %zu probes, %u over 1 s or unanswered; latency ms "
      "min %.2f, median %.2f, p90 %.2f, p99 %.2f, max %.2f\n",
      o.slow, r.slow_open_min, r.slow_reopened, r.health_ms.size(), missed, pct(0), pct(0.5),
      pct(0.9), pct(0.99), ok.empty() ? 0.0 : ok.back());
  std::printf("%u bad requests from %u clients in %.1f s; statuses:", o.bad, o.clients,
              r.bad_seconds);
  for (const auto& [status, n] : r.statuses)
    std::printf(" %s=%llu", status ? std::to_string(status).c_str() : "none",
                static_cast<unsigned long long>(n));
  std::printf(
      "\nresident memory: before %.1f MiB, peak %.1f MiB, after %.1f MiB (after - before "
      "%+.1f MiB)\n",
      r.rss_before_kb / 1024.0, r.rss_peak_kb / 1024.0, r.rss_after_kb / 1024.0,
      (double(r.rss_after_kb) - double(r.rss_before_kb)) / 1024.0);
  std::printf("still serving afterwards: %s\n", r.serving_after ? "yes" : "NO");
  return missed == 0 && r.serving_after ? 0 : 1;
}

}  // namespace sy::cli
