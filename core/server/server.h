// `switchyard serve`: the HTTP server over the router, the hot-swap reloader and the metrics.
// Endpoints: POST /v1/completions, POST /v1/chat/completions, GET /v1/models[/<id>],
// GET /health, GET /metrics, POST /admin/reload, POST /admin/rollback, GET /admin/status.
// Access: API keys guard /v1/*, an admin key /admin/* (without one, loopback clients only), an
// optional metrics key /metrics (server/access.h); /admin/* POSTs take application/json only.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "server/access.h"
#include "server/completion_service.h"
#include "server/reloader.h"
#include "server/router.h"
#include "server/serve_metrics.h"

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
};

class Server {
 public:
  // Reads the config and loads every variant it names; throws ConfigError or the load error.
  explicit Server(std::filesystem::path config_path, ServerOverrides o = {});
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and serves on a background thread; throws std::runtime_error when it cannot bind.
  void start();
  // Stops accepting, aborts what is still running and joins. Idempotent.
  void stop();
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
  ServeOptions opts_;
  ServerOverrides over_;
  std::unique_ptr<ServeMetrics> metrics_;
  Router router_;
  std::unique_ptr<Reloader> reloader_;
  std::unique_ptr<CompletionService> completions_;
  std::unique_ptr<http::HttpServer> http_;
  int port_ = -1;
  int64_t started_ns_ = 0;
};

}  // namespace sy::server
