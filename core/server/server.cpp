#include "server/server.h"

#include <httplib.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "host/host_api.h"
#include "host/log.h"
#include "server/api_error.h"
#include "server/gateway_metrics.h"

namespace sy::server {
namespace {

using nlohmann::json;

void send_json(httplib::Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
}

json result_json(const ReloadResult& r) {
  json j = {{"ok", r.ok},         {"trigger", r.trigger}, {"generation", r.generation},
            {"loaded", r.loaded}, {"kept", r.kept},       {"retired", r.retired}};
  if (!r.ok) j["error"] = r.error;
  return j;
}

// The largest context of the startup variants, for the token-count histogram buckets.
uint32_t context_hint(const ServeConfig& c) {
  uint32_t m = 0;
  for (const auto& v : c.variants) m = std::max(m, v.config.engine.max_context);
  return m ? m : 4096;
}

}  // namespace

Server::Server(std::filesystem::path config_path, ServerOverrides o) : over_(std::move(o)) {
  const ServeConfig cfg = load_serve_config(config_path);
  opts_ = cfg.serve;
  if (over_.host) opts_.host = *over_.host;
  if (over_.port) opts_.port = *over_.port;
  if (over_.watch_ms) opts_.watch_ms = *over_.watch_ms;
  metrics_ = std::make_unique<ServeMetrics>(opts_.model_name, context_hint(cfg));
  if (opts_.gateway_metrics) define_gateway_metrics(metrics_->registry());
  if (opts_.kv_events) kv_events_ = std::make_unique<KvEventPublisher>(*opts_.kv_events);
  reloader_ = std::make_unique<Reloader>(config_path, router_, *metrics_);
  reloader_->set_block_observer(kv_events_.get());
  if (over_.defer_load) {
    deferred_ = cfg;
  } else {
    reloader_->install_initial(cfg);
    readiness_ = Readiness::ready;
  }
  completions_ = std::make_unique<CompletionService>(router_, *metrics_, opts_.model_name);
  tokenize_ = std::make_unique<TokenizeService>(router_, opts_.model_name);
  http_ = std::make_unique<httplib::Server>();
  routes();
}

Server::~Server() {
  stop();
}

std::string Server::metrics_text() {
  Registry& reg = metrics_->registry();
  reg.clear("switchyard:variant_info");
  reg.clear("switchyard:variant_weight");
  const auto d = router_.current();
  const bool back = router_.rolled_back();
  if (d)
    for (const auto& e : d->variants) {
      const auto& c = e.runner->variant().config;
      reg.set("switchyard:variant_info",
              {{"model_name", opts_.model_name},
               {"variant", e.name},
               {"scheduler", c.scheduler.plugin},
               {"backend", c.backend.plugin},
               {"state", "active"}},
              1);
      reg.set("switchyard:variant_weight", metrics_->labels(e.name),
              back ? (e.name == d->baseline ? 1.0 : 0.0) : e.weight);
    }
  for (const auto& s : reloader_->snapshots())
    if (s.draining)
      reg.set("switchyard:variant_info",
              {{"model_name", opts_.model_name},
               {"variant", s.variant},
               {"scheduler", ""},
               {"backend", ""},
               {"state", "draining"}},
              1);
  const auto live = reloader_->snapshots();
  if (opts_.gateway_metrics) update_gateway_metrics(reg, opts_.model_name, live, d.get());
  return metrics_->render(live, host_counters());
}

void Server::begin_drain() {
  readiness_ = Readiness::draining;
  if (const auto d = router_.current())
    for (const auto& e : d->variants) e.runner->start_drain();
}

bool Server::drained() const {
  for (const auto& s : reloader_->snapshots())
    if (s.running + s.waiting + s.pending > 0) return false;
  return true;
}

std::string Server::status_json() {
  json j;
  const auto d = router_.current();
  j["model"] = opts_.model_name;
  j["generation"] = d ? d->generation : 0;
  j["rolled_back"] = router_.rolled_back();
  j["baseline"] = d ? d->baseline : "";
  j["variants"] = json::array();
  if (d) {
    for (const auto& e : d->variants) {
      const auto& c = e.runner->variant().config;
      j["variants"].push_back({{"name", e.name},
                               {"weight", e.weight},
                               {"model", c.model.path},
                               {"backend", c.backend.plugin},
                               {"scheduler", c.scheduler.plugin}});
    }
    if (d->shadow)
      j["shadow"] = {{"variant", d->shadow->variant}, {"fraction", d->shadow->fraction}};
  }
  j["draining"] = reloader_->draining();
  j["last_reload"] = result_json(reloader_->last());
  const Registry& reg = metrics_->registry();
  const Labels m = {{"model_name", opts_.model_name}};
  j["swaps"] = reg.value("switchyard:swaps", m);
  j["swap_failures"] = reg.value("switchyard:swap_failures", m);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void Server::routes() {
  httplib::Server& s = *http_;
  s.new_task_queue = [n = opts_.http_threads] { return new httplib::ThreadPool(n); };
  s.set_tcp_nodelay(true);  // headers and body go out in separate writes: no Nagle delay
  s.set_payload_max_length(16u << 20);
  s.set_read_timeout(30, 0);
  s.set_keep_alive_timeout(5);
  s.set_keep_alive_max_count(1000);
  s.Post("/v1/completions", [this](const httplib::Request& q, httplib::Response& r) {
    completions_->handle(q, r, false);
  });
  s.Post("/v1/chat/completions", [this](const httplib::Request& q, httplib::Response& r) {
    completions_->handle(q, r, true);
  });
  s.Post("/tokenize",
         [this](const httplib::Request& q, httplib::Response& r) { tokenize_->tokenize(q, r); });
  s.Post("/detokenize",
         [this](const httplib::Request& q, httplib::Response& r) { tokenize_->detokenize(q, r); });
  s.Get("/health", [this](const httplib::Request&, httplib::Response& r) {
    const auto d = router_.current();
    const Readiness st = readiness_;
    if (st == Readiness::loading)
      return send_error(r, ApiError(503, "The server is loading its variants.",
                                    "service_unavailable", "", "loading"));
    if (st == Readiness::draining)
      return send_error(r, ApiError(503,
                                    "The server is draining: it finishes the requests it has "
                                    "and takes no new ones.",
                                    "service_unavailable", "", "draining"));
    if (!d)
      return send_error(
          r, ApiError(503, "No variant is loaded.", "service_unavailable", "", "no_variant"));
    send_json(r, 200, {{"status", "ok"}, {"generation", d->generation}});
  });
  s.Get("/v1/models", [this](const httplib::Request&, httplib::Response& r) {
    // The served name routes by weight; each variant's name pins that variant.
    const int64_t created = std::time(nullptr) - (now_ns() - started_ns_) / 1'000'000'000;
    json data = json::array({{{"id", opts_.model_name},
                              {"object", "model"},
                              {"created", created},
                              {"owned_by", "switchyard"}}});
    if (const auto d = router_.current())
      for (const auto& e : d->variants)
        data.push_back({{"id", e.name},
                        {"object", "model"},
                        {"created", created},
                        {"owned_by", "switchyard"},
                        {"parent", opts_.model_name}});
    send_json(r, 200, {{"object", "list"}, {"data", data}});
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
    r.set_content(metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Post("/admin/reload", [this](const httplib::Request&, httplib::Response& r) {
    const ReloadResult res = reloader_->reload("admin");
    if (res.ok) return send_json(r, 200, result_json(res));
    json body =
        json::parse(error_body(ApiError(422, res.error, "reload_error", "", "reload_failed")));
    body["generation"] = res.generation;  // still serving
    send_json(r, 422, body);
  });
  s.Post("/admin/rollback", [this](const httplib::Request&, httplib::Response& r) {
    const auto d = router_.current();
    if (!d)
      return send_error(
          r, ApiError(503, "No variant is loaded.", "service_unavailable", "", "no_variant"));
    router_.rollback();
    logger()->warn("rollback: all traffic to baseline variant {}", d->baseline);
    send_json(r, 200, {{"ok", true}, {"baseline", d->baseline}, {"generation", d->generation}});
  });
  s.Get("/admin/status", [this](const httplib::Request&, httplib::Response& r) {
    r.set_content(status_json(), "application/json");
  });
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& q, httplib::Response& r) {
        if (!r.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;  // a handler's own error
        static const std::set<std::string> known = {
            "/v1/completions", "/v1/chat/completions", "/v1/models",      "/health",
            "/metrics",        "/admin/reload",        "/admin/rollback", "/admin/status"};
        ApiError e(r.status, "", "invalid_request_error");
        if (r.status == 404 && known.count(q.path))
          e = ApiError(405, "Method " + q.method + " is not allowed on " + q.path + ".",
                       "invalid_request_error", "", "method_not_allowed");
        else if (r.status == 404)
          e = ApiError(404, "Unknown path: " + q.method + " " + q.path + ".",
                       "invalid_request_error", "", "not_found");
        else if (r.status == 413)
          e = ApiError(413, "The request body is larger than 16 MiB.", "invalid_request_error", "",
                       "payload_too_large");
        else
          e = ApiError(r.status, "HTTP error " + std::to_string(r.status) + ".",
                       "invalid_request_error");
        send_error(r, e);
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& r, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    logger()->error("request failed: {}", what);
    send_error(
        r, ApiError(500, "Internal server error: " + what, "server_error", "", "internal_error"));
  });
}

void Server::start() {
  listen();
  load();
}

void Server::listen() {
  started_ns_ = now_ns();
  // cpp-httplib 0.11 listens with a backlog of 5: a burst of new connections then stalls or
  // fails. Its socket-options hook sees the listening socket before listen(), so keep it and
  // raise the backlog afterwards (a second listen() only updates it).
  int listen_fd = -1;
  http_->set_socket_options([&listen_fd](socket_t fd) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = fd;
  });
  if (opts_.port == 0)
    port_ = http_->bind_to_any_port(opts_.host);
  else
    port_ = http_->bind_to_port(opts_.host, opts_.port) ? opts_.port : -1;
  if (port_ < 0)
    throw std::runtime_error("cannot listen on " + opts_.host + ":" + std::to_string(opts_.port));
  if (listen_fd >= 0) ::listen(listen_fd, 1024);
  http_->set_socket_options([](socket_t fd) {  // drop the reference to the local above
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  listen_ = std::thread([this] { http_->listen_after_bind(); });
}

void Server::load() {
  if (deferred_) {
    logger()->info("loading {} variant(s); /health answers 503 until they are ready",
                   deferred_->variants.size());
    try {
      reloader_->install_initial(*deferred_);
    } catch (...) {
      stop();
      throw;
    }
    deferred_.reset();
    readiness_ = Readiness::ready;
  }
  reloader_->start(opts_.watch_ms, over_.sighup);
  logger()->info("serving {} on http://{}:{}", opts_.model_name, opts_.host, port_);
}

void Server::stop() {
  if (!http_) return;
  http_->stop();
  // Stopping the runners ends every unfinished request, so blocked handlers return.
  reloader_->shutdown_all();
  if (listen_.joinable()) listen_.join();
  http_.reset();
  reloader_.reset();
  router_.install(nullptr);
}

}  // namespace sy::server
