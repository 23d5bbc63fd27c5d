// switchyard bench-serve: starts the server in this process on 127.0.0.1 and drives it with N
// closed-loop clients for a fixed time (loopback only, bounded), then prints requests/s,
// errors and latency percentiles. Exit status 1 when any request failed.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench/load_driver.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/options.h"
#include "host/log.h"
#include "server/server.h"

namespace sy::cli {
namespace {

// The default: the small generated dense model on oneDNN with the optimized scheduler.
const std::string kDefaultServe = std::string(kDefaultModelAndBackend) + R"(
[serve]
max_queue = 1024
request_timeout_s = 60

[scheduler]
plugin = "dynamic"

[engine]
max_seqs = 32
max_batch_tokens = 1024
)";

}  // namespace

int cmd_bench_serve(int argc, char** argv) {
  Command app("bench-serve",
              "Starts the server in-process on 127.0.0.1 (any free port) and sends completions "
              "from N clients for S seconds; without --config an embedded default serves "
              "models/dense-small.gguf.");
  std::string config_file, log_level = "warn";
  bench::LoadOptions lo;
  app.add_option("--config", config_file, "the server's TOML config");
  app.add_option("--duration", lo.duration_s, "seconds of load")->check(CLI::Range(0.001, 3600.0));
  app.add_option("--clients", lo.clients, "concurrent clients")->check(CLI::Range(1, 256));
  app.add_option("--max-tokens", lo.max_tokens, "tokens per answer (ignore_eos)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--prompt-len", lo.prompt_len, "bytes of prompt text")
      ->check(CLI::Range(1, 1 << 20));
  app.add_flag("--stream", lo.stream, "stream the answers (server-sent events)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
  if (!parse(app, argc, argv)) return 0;
  set_log_level(log_level);
  std::filesystem::path config = config_file;
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
  lo.port = s.port();
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
