// switchyard serve: the OpenAI-compatible HTTP server over the variants a config names, with
// hot swap on a config change, SIGHUP or POST /admin/reload.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/options.h"
#include "host/log.h"
#include "server/serve_config.h"
#include "server/server.h"
#include "server/signals.h"

namespace sy::cli {
namespace {

// --flag, else the environment variable; comma-separated for several keys.
std::vector<std::string> keys_from(const std::optional<std::string>& flag, const char* env) {
  if (flag) return server::split_keys(*flag);
  const char* v = std::getenv(env);
  return v ? server::split_keys(v) : std::vector<std::string>{};
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  Command app(
      "serve",
      "Serves /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics and "
      "/admin/{reload,rollback,status}; X.toml is a single-variant config or [[variants]] "
      "with weights and a [serve] table (configs/serve.toml). Edit the file, send SIGHUP or "
      "POST /admin/reload to swap variants live.");
  std::string config, log_level;
  std::optional<std::string> host, api_key, admin_key, metrics_key;
  std::optional<uint16_t> port;
  app.add_option("--config", config, "the serve config (X.toml)")->required();
  app.add_option("--host", host, "address to listen on (default: the config's)");
  app.add_option("--port", port, "port to listen on; 0: any free one (default: the config's)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
  app.add_option("--api-key", api_key,
                 "K[,K2]: /v1/* requires 'Authorization: Bearer K' (else SWITCHYARD_API_KEY)");
  app.add_option("--admin-key", admin_key,
                 "guards /admin/*, which otherwise answers loopback clients only (else "
                 "SWITCHYARD_ADMIN_KEY)");
  app.add_option("--metrics-key", metrics_key, "guards /metrics (else SWITCHYARD_METRICS_KEY)");
  if (!parse(app, argc, argv)) return 0;
  const server::ServeConfig cfg = server::load_serve_config(config);
  set_log_level(!log_level.empty() ? log_level : cfg.log_level == "warn" ? "info" : cfg.log_level);
  server::ServerOverrides o;
  if (host) o.host = *host;
  if (port) o.port = *port;
  o.sighup = true;
  o.keys.api = keys_from(api_key, "SWITCHYARD_API_KEY");
  o.keys.admin = keys_from(admin_key, "SWITCHYARD_ADMIN_KEY");
  o.keys.metrics = keys_from(metrics_key, "SWITCHYARD_METRICS_KEY");
  o.defer_load = true;  // bind first: /health says 503 (loading) until the variants are up
  server::install_signal_handlers();
  server::Server s(config, o);
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
