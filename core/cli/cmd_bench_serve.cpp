// switchyard bench-serve: starts the server in this process on 127.0.0.1 and drives it with N
// closed-loop clients for a fixed time (loopback only, bounded), then prints requests/s,
// errors and latency percentiles. Exit status 1 when any request failed.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/load_driver.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "host/log.h"
#include "server/server.h"

namespace sy::cli {
namespace {

// The default: the small generated dense model on oneDNN with the optimized scheduler.
constexpr const char* kDefaultServe = R"(
[serve]
max_queue = 1024
request_timeout_s = 60

[model]
path = "models/dense-small.gguf"
generate = "dense-small"
seed = 7

[backend]
plugin = "cpu_onednn"

[scheduler]
plugin = "dynamic"

[engine]
max_seqs = 32
max_batch_tokens = 1024
)";

}  // namespace

int cmd_bench_serve(int argc, char** argv) {
  Args a(argc, argv, 2, {"config", "duration", "clients", "max-tokens", "prompt-len", "log-level"},
         {"help", "stream"});
  if (a.has("help")) {
    std::printf(
        "usage: switchyard bench-serve [--config X.toml] [--duration S (60)] [--clients N (8)]\n"
        "                              [--max-tokens N (16)] [--prompt-len BYTES (32)] [--stream]\n"
        "starts the server in-process on 127.0.0.1 (any free port) and sends completions from N\n"
        "clients for S seconds; without --config an embedded default serves "
        "models/dense-small.gguf\n");
    return 0;
  }
  set_log_level(a.str("log-level", "warn"));
  std::filesystem::path config = a.str("config");
  if (config.empty()) {
    config = std::filesystem::temp_directory_path() / "switchyard-bench-serve.toml";
    std::ofstream(config) << kDefaultServe;
  }
  server::ServerOverrides o;
  o.host = "127.0.0.1";  // loopback only, whatever the config says
  o.port = 0;
  o.watch_ms = 0;
  server::Server s(config, o);
  s.start();
  bench::LoadOptions lo;
  lo.port = s.port();
  lo.duration_s = a.number("duration", 60);
  lo.clients = static_cast<uint32_t>(a.integer("clients", 8));
  lo.max_tokens = static_cast<uint32_t>(a.integer("max-tokens", 16));
  lo.prompt_len = static_cast<uint32_t>(a.integer("prompt-len", 32));
  lo.stream = a.has("stream");
  if (lo.duration_s <= 0 || lo.duration_s > 3600)
    throw UsageError("--duration must be in (0, 3600]");
  if (lo.clients < 1 || lo.clients > 256) throw UsageError("--clients must be in [1, 256]");
  std::fprintf(stderr, "bench-serve: %s on 127.0.0.1:%d for %.0f s\n", config.string().c_str(),
               s.port(), lo.duration_s);
  const bench::LoadReport r = bench::run_load(lo);
  const std::string summary = bench::server_summary(s.metrics_text());
  s.stop();
  std::fputs(bench::format_report(lo, r).c_str(), stdout);
  std::fputs(summary.c_str(), stdout);
  return r.errors == 0 && r.requests > 0 ? 0 : 1;
}

}  // namespace sy::cli
