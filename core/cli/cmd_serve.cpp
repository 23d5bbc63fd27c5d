// switchyard serve: the OpenAI-compatible HTTP server over the variants a config names, with
// hot swap on a config change, SIGHUP or POST /admin/reload.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "host/log.h"
#include "server/serve_config.h"
#include "server/server.h"
#include "server/signals.h"

namespace sy::cli {
namespace {

// --flag, else the environment variable; comma-separated for several keys.
std::vector<std::string> keys_from(const Args& a, const char* flag, const char* env) {
  if (a.has(flag)) return server::split_keys(a.str(flag));
  const char* v = std::getenv(env);
  return v ? server::split_keys(v) : std::vector<std::string>{};
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  Args a(argc, argv, 2,
         {"config", "host", "port", "log-level", "api-key", "admin-key", "metrics-key"}, {"help"});
  if (a.has("help") || !a.has("config")) {
    std::fprintf(
        a.has("help") ? stdout : stderr,
        "usage: switchyard serve --config X.toml [--host H] [--port P] [--log-level L]\n"
        "                        [--api-key K[,K2]] [--admin-key K] [--metrics-key K]\n"
        "serves /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics and\n"
        "/admin/{reload,rollback,status}; X.toml is a single-variant config or [[variants]] with\n"
        "weights and a [serve] table (configs/serve.toml). Edit the file, send SIGHUP or POST\n"
        "/admin/reload to swap variants live.\n"
        "--api-key (or SWITCHYARD_API_KEY) makes /v1/* require 'Authorization: Bearer K';\n"
        "--admin-key (SWITCHYARD_ADMIN_KEY) guards /admin/*, which otherwise answers loopback\n"
        "clients only; --metrics-key (SWITCHYARD_METRICS_KEY) guards /metrics.\n");
    if (a.has("help")) return 0;
    throw UsageError("--config is required");
  }
  const server::ServeConfig cfg = server::load_serve_config(a.str("config"));
  set_log_level(a.str("log-level", cfg.log_level == "warn" ? "info" : cfg.log_level));
  server::ServerOverrides o;
  if (a.has("host")) o.host = a.str("host");
  if (a.has("port")) {
    const int64_t p = a.integer("port", 0);
    if (p < 0 || p > 65535) throw UsageError("--port must be in [0, 65535]");
    o.port = static_cast<uint16_t>(p);
  }
  o.sighup = true;
  o.keys.api = keys_from(a, "api-key", "SWITCHYARD_API_KEY");
  o.keys.admin = keys_from(a, "admin-key", "SWITCHYARD_ADMIN_KEY");
  o.keys.metrics = keys_from(a, "metrics-key", "SWITCHYARD_METRICS_KEY");
  o.defer_load = true;  // bind first: /health says 503 (loading) until the variants are up
  server::install_signal_handlers();
  server::Server s(a.str("config"), o);
  s.listen();
  std::printf("switchyard serving on http://%s:%d\n", s.host().c_str(), s.port());
  std::fflush(stdout);
  s.load();
  while (!server::stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Drain: /health turns 503 so a load balancer stops sending, what runs finishes; a second
  // SIGINT/SIGTERM or drain_timeout_s cuts it short.
  const double limit_s = s.options().drain_timeout_s;
  logger()->info("draining (at most {} s)", limit_s);
  s.begin_drain();
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (!s.drained() && std::chrono::steady_clock::now() < until && server::stop_signals() < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  logger()->info("stopping");
  s.stop();
  return 0;
}

}  // namespace sy::cli
