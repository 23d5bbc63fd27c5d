// `switchyard serve`: the HTTP server over the router, the hot-swap reloader and the metrics.
// Endpoints: POST /v1/completions, POST /v1/chat/completions, GET /v1/models[/<id>],
// POST /tokenize, POST /detokenize, POST /apply-template, GET /health, GET /metrics,
// POST /admin/reload, POST /admin/rollback, GET /admin/status.
// Access: API keys guard /v1/*, /tokenize, /detokenize and /apply-template, an admin key
// /admin/* (without one, loopback clients only), an optional metrics key /metrics
// (server/access.h); /admin/* POSTs take application/json only.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "server/access.h"
#include "server/completion_service.h"
#include "server/kv_event_publisher.h"
#include "server/reloader.h"
#include "server/router.h"
#include "server/serve_metrics.h"
#include "server/tokenize_service.h"

namespace sy::server::http {
class HttpServer;
struct Request;
struct Response;
}  // namespace sy::server::http

namespace sy::server {

struct ServerOverrides {
  std::optional<std::string> host;
  std::optional<uint16_t> port;  // 0: any free port (tests, bench-serve)
  std::optional<uint32_t> watch_ms;
  bool sighup = false;  // reload on SIGHUP (the CLI installs the handler)
  AccessKeys keys;      // none: every area open (admin to loopback clients only)
  // Load the variants in start(), after the port is bound, so /health answers 503 (loading)
  // meanwhile instead of refusing connections (the CLI; a load balancer sees a replica coming).
  bool defer_load = false;
};

class Server {
 public:
  // Reads the config and loads every variant it names; throws ConfigError or the load error.
  explicit Server(std::filesystem::path config_path, ServerOverrides o = {});
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and serves on a background thread; throws std::runtime_error when it cannot bind.
  // listen() then load().
  void start();
  // The two halves: bind and serve (/health answers 503 while a deferred load is pending), then
  // load the deferred variants (throws their load error, after stopping) and watch the config.
  void listen();
  void load();
  // Stops accepting, aborts what is still running and joins. Idempotent.
  void stop();
  // SIGTERM: /health answers 503 and new requests are refused (503) while the accepted ones
  // run to the end; drained() is true once nothing is left. stop() afterwards.
  void begin_drain();
  bool drained() const;
  const ServeOptions& options() const { return opts_; }
  KvEventPublisher* kv_events() { return kv_events_.get(); }
  int port() const { return port_; }
  const std::string& host() const { return opts_.host; }

  Router& router() { return router_; }
  Reloader& reloader() { return *reloader_; }
  ServeMetrics& metrics() { return *metrics_; }
  std::string metrics_text();
  std::string status_json();

 private:
  void routes();
  bool allowed(const http::Request& q, http::Response& r) const;
  enum class Readiness { loading, ready, draining };
  ServeOptions opts_;
  ServerOverrides over_;
  std::optional<ServeConfig> deferred_;  // defer_load: what load() installs
  std::string deferred_text_;            // and the file content it came from
  std::atomic<Readiness> readiness_{Readiness::loading};
  // Declared before the variants' owners: it outlives every cache that reports to it.
  std::unique_ptr<KvEventPublisher> kv_events_;
  std::unique_ptr<ServeMetrics> metrics_;
  Router router_;
  std::unique_ptr<Reloader> reloader_;
  std::unique_ptr<CompletionService> completions_;
  std::unique_ptr<TokenizeService> tokenize_;
  std::unique_ptr<http::HttpServer> http_;
  int port_ = -1;
  int64_t started_ns_ = 0;
};

}  // namespace sy::server
