#include "server/server.h"

#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "config/toml_reader.h"
#include "host/host_api.h"
#include "host/log.h"
#include "server/api_error.h"
#include "server/gateway_metrics.h"
#include "server/http/http_server.h"
#include "server/json_body.h"

namespace sy::server {
namespace {

using http::HttpServer;
using http::Request;
using http::Response;
using nlohmann::json;

void send_json(Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");
  if (e.status == 429 || e.status == 503) res.set_header("Retry-After", "1");
  res.set_content(error_body(e), "application/json");
}

// The OpenAI error type for a status the HTTP layer raises.
std::string error_type(int status) {
  if (status == 408) return "timeout_error";
  if (status == 503) return "service_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

json result_json(const ReloadResult& r) {
  json j = {{"ok", r.ok},          {"trigger", r.trigger}, {"generation", r.generation},
            {"loaded", r.loaded},  {"kept", r.kept},       {"retired", r.retired},
            {"changed", r.changed}};
  if (!r.ok) j["error"] = r.error;
  return j;
}

// The largest context of the startup variants, for the token-count histogram buckets.
uint32_t context_hint(const ServeConfig& c) {
  uint32_t m = 0;
  for (const auto& v : c.variants) m = std::max(m, v.config.engine.max_context);
  return m ? m : 4096;
}

http::ServerLimits http_limits(const ServeOptions& o) {
  http::ServerLimits l;
  l.parse.max_head_bytes = o.max_header_bytes;
  l.parse.max_headers = o.max_headers;
  l.parse.max_target_bytes = std::min<size_t>(8 << 10, o.max_header_bytes);
  l.parse.max_body_bytes = o.max_body_bytes;
  l.max_connections = o.max_connections;
  l.header_timeout_s = o.header_timeout_s;
  l.read_timeout_s = o.read_timeout_s;
  l.idle_timeout_s = o.idle_timeout_s;
  l.write_timeout_s = o.write_timeout_s;
  l.memory_budget_bytes = uint64_t(o.request_memory_mb) << 20;
  l.api_threads = o.http_threads;
  return l;
}

// The media type of a Content-Type value, lower-case, without parameters.
std::string media_type(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

}  // namespace

Server::Server(std::filesystem::path config_path, ServerOverrides o) : over_(std::move(o)) {
  std::string text = read_text_file(config_path);
  const ServeConfig cfg = parse_serve_config(text, config_path.string());
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
    deferred_text_ = std::move(text);
  } else {
    reloader_->install_initial(cfg, std::move(text));
    readiness_ = Readiness::ready;
  }
  CompletionLimits limits;
  limits.json = JsonLimits{opts_.max_json_depth, opts_.max_json_elements};
  limits.max_tokens = opts_.max_tokens_limit;
  limits.smaller_priority_first = opts_.priority_order == "vllm";
  completions_ = std::make_unique<CompletionService>(router_, *metrics_, opts_.model_name, limits);
  tokenize_ = std::make_unique<TokenizeService>(router_, opts_.model_name, limits.json);
  http_ = std::make_unique<HttpServer>(http_limits(opts_));
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
  return metrics_->render(live);
}

void Server::begin_drain() {
  readiness_ = Readiness::draining;
  completions_->begin_drain();
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

// The access rules of server/access.h; false when `r` holds the refusal.
bool Server::allowed(const Request& q, Response& r) const {
  const AccessKeys& k = over_.keys;
  const std::string token = bearer_token(q.get_header_value("Authorization"));
  switch (area_of(q.path)) {
    case Area::open:
      return true;
    case Area::metrics:
      if (k.metrics.empty() || key_matches(k.metrics, token)) return true;
      send_error(
          r, ApiError(401, "This endpoint needs the metrics key as 'Authorization: Bearer <key>'.",
                      "invalid_request_error", "", "invalid_api_key"));
      return false;
    case Area::api:
      if (k.api.empty() || key_matches(k.api, token)) return true;
      send_error(r, ApiError(401,
                             token.empty() ? "You didn't provide an API key. Send it in an "
                                             "Authorization header as 'Bearer <key>'."
                                           : "Incorrect API key provided.",
                             "invalid_request_error", "", "invalid_api_key"));
      return false;
    case Area::admin:
      if (!k.admin.empty()) {
        if (!key_matches(k.admin, token)) {
          send_error(r, ApiError(401,
                                 "The admin API needs the admin key (--admin-key or "
                                 "SWITCHYARD_ADMIN_KEY) as 'Authorization: Bearer <key>'.",
                                 "invalid_request_error", "", "invalid_admin_key"));
          return false;
        }
      } else if (!is_loopback(q.remote_addr)) {
        send_error(r, ApiError(403,
                               "The admin API answers only loopback clients when no admin key is "
                               "set (--admin-key or SWITCHYARD_ADMIN_KEY).",
                               "permission_error", "", "admin_loopback_only"));
        return false;
      }
      // A web page can POST forms (urlencoded, multipart, text/plain) to a local port without
      // asking; application/json needs a CORS preflight this server never grants.
      if (q.method == "POST" &&
          media_type(q.get_header_value("Content-Type")) != "application/json") {
        send_error(r, ApiError(415,
                               "The admin API accepts only 'Content-Type: application/json' (curl: "
                               "-H 'Content-Type: application/json' -d '{}').",
                               "invalid_request_error", "", "unsupported_media_type"));
        return false;
      }
      return true;
  }
  return false;
}

void Server::routes() {
  HttpServer& s = *http_;
  const JsonLimits json_limits{opts_.max_json_depth, opts_.max_json_elements};
  s.set_guard([this](const Request& q, Response& r) { return allowed(q, r); });
  s.set_error_writer(
      [](Response& r, int status, const std::string& message, const std::string& code) {
        send_error(r, ApiError(status, message, error_type(status), "", code));
      });
  s.set_exception_handler([](const Request&, Response& r, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const ApiError& e) {
      return send_error(r, e);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    logger()->error("request failed: {}", what);
    send_error(
        r, ApiError(500, "Internal server error: " + what, "server_error", "", "internal_error"));
  });
  s.Post(
      "/v1/completions",
      [this](const Request& q, Response& r) { completions_->handle(q, r, false); },
      HttpServer::Pool::api);
  s.Post(
      "/v1/chat/completions",
      [this](const Request& q, Response& r) { completions_->handle(q, r, true); },
      HttpServer::Pool::api);
  s.Post(
      "/tokenize", [this](const Request& q, Response& r) { tokenize_->tokenize(q, r); },
      HttpServer::Pool::api);
  s.Post(
      "/detokenize", [this](const Request& q, Response& r) { tokenize_->detokenize(q, r); },
      HttpServer::Pool::api);
  s.Post(
      "/apply-template", [this](const Request& q, Response& r) { tokenize_->apply_template(q, r); },
      HttpServer::Pool::api);
  s.Get("/health", [this](const Request&, Response& r) {
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
  // The served name routes by weight; each variant's name pins that variant.
  auto model_list = [this] {
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
    return data;
  };
  s.Get("/v1/models", [model_list](const Request&, Response& r) {
    send_json(r, 200, {{"object", "list"}, {"data", model_list()}});
  });
  s.GetPrefix("/v1/models/", [model_list](const Request& q, Response& r) {
    const std::string id = http::percent_decode(q.path.substr(std::string("/v1/models/").size()));
    for (const json& m : model_list())
      if (m["id"] == id) return send_json(r, 200, m);
    send_error(r, ApiError(404, "The model '" + id.substr(0, 256) + "' does not exist",
                           "invalid_request_error", "model", "model_not_found"));
  });
  s.Get("/metrics", [this](const Request&, Response& r) {
    r.set_content(metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  // The admin POSTs take an empty body or a JSON object without fields.
  auto admin_body = [json_limits](const Request& q) {
    if (q.body.empty()) return;
    const json b = parse_json_body(q.body, json_limits);
    if (!b.is_object())
      throw ApiError(400, "The request body must be a JSON object.", "invalid_request_error", "",
                     "invalid_json");
    for (const auto& [k, _] : b.items())
      throw ApiError(400, "Unrecognized request argument supplied: " + k.substr(0, 64),
                     "invalid_request_error", k.substr(0, 64), "unknown_parameter");
  };
  s.Post("/admin/reload", [this, admin_body](const Request& q, Response& r) {
    admin_body(q);
    const ReloadResult res = reloader_->reload("admin");
    if (res.ok) return send_json(r, 200, result_json(res));
    json body =
        json::parse(error_body(ApiError(422, res.error, "reload_error", "", "reload_failed")));
    body["generation"] = res.generation;  // still serving
    send_json(r, 422, body);
  });
  s.Post("/admin/rollback", [this, admin_body](const Request& q, Response& r) {
    admin_body(q);
    const auto d = router_.current();
    if (!d)
      return send_error(
          r, ApiError(503, "No variant is loaded.", "service_unavailable", "", "no_variant"));
    router_.rollback();
    logger()->warn("rollback: all traffic to baseline variant {} until the config changes",
                   d->baseline);
    send_json(r, 200, {{"ok", true}, {"baseline", d->baseline}, {"generation", d->generation}});
  });
  s.Get("/admin/status",
        [this](const Request&, Response& r) { r.set_content(status_json(), "application/json"); });
}

void Server::start() {
  listen();
  load();
}

void Server::listen() {
  started_ns_ = now_ns();
  port_ = http_->bind(opts_.host, opts_.port);
  http_->start();
}

void Server::load() {
  if (deferred_) {
    logger()->info("loading {} variant(s); /health answers 503 until they are ready",
                   deferred_->variants.size());
    try {
      reloader_->install_initial(*deferred_, std::move(deferred_text_));
    } catch (...) {
      stop();
      throw;
    }
    deferred_.reset();
    readiness_ = Readiness::ready;
  }
  reloader_->start(opts_.watch_ms, over_.sighup);
  if (!is_loopback(opts_.host) && opts_.host != "localhost" && over_.keys.api.empty())
    logger()->warn(
        "serving on {} with no API key: anyone who can reach this address can use the model "
        "(set --api-key or SWITCHYARD_API_KEY)",
        opts_.host);
  if (::geteuid() == 0)
    logger()->warn(
        "running as root: plugins and model files load with root privileges; run the server as "
        "an unprivileged user");
  logger()->info("serving {} on http://{}:{}", opts_.model_name, opts_.host, port_);
}

void Server::stop() {
  if (!http_) return;
  http_->stop_listening();
  // Stopping the runners ends every unfinished request, so blocked handlers return.
  reloader_->shutdown_all();
  http_->stop();
  http_.reset();
  reloader_.reset();
  router_.install(nullptr);
}

}  // namespace sy::server
