#include "server/completion_service.h"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <optional>

#include "host/host_api.h"
#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "server/peer_watch.h"
#include "server/shadow.h"

namespace sy::server {
namespace {

// How often a waiting handler looks at its peer (disconnects are noticed this fast).
constexpr auto kPoll = std::chrono::milliseconds(50);

// Tokens and the finish of one request, handed from the engine thread to the HTTP thread.
struct Channel {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> tokens;  // sampled, not yet consumed
  std::optional<Outcome> outcome;
};

// An accepted request.
struct Admitted {
  std::shared_ptr<EngineRunner> runner;
  uint64_t id = 0;
  std::shared_ptr<Channel> ch;
  ResponseMeta meta;
  bool include_usage = false;
  int fd = -1;
};

ApiError timeout_error(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return ApiError(
      504,
      std::string("The request did not finish within the server's request timeout of ") + buf +
          " s.",
      "timeout_error", "", "request_timeout");
}

std::string request_id(const httplib::Request& req, bool chat, std::atomic<uint64_t>& next) {
  std::string id = req.get_header_value("X-Request-Id");
  if (id.size() > 256)
    throw ApiError(400, "Invalid 'X-Request-Id' header: longer than 256 characters.",
                   "invalid_request_error", "X-Request-Id");
  if (id.empty()) id = std::string(chat ? "chatcmpl-" : "cmpl-") + std::to_string(next++);
  return id;
}

// Streams one request's events until it finishes; false ends the response (client gone).
// Waits until `ready()` holds (called under the channel's lock). False when the client went
// away first: the request is cancelled (nobody will read the answer) and its finish awaited.
template <class Ready>
bool wait_or_cancel(Admitted& a, Ready ready) {
  std::unique_lock<std::mutex> lk(a.ch->mu);
  while (!ready()) {
    a.ch->cv.wait_for(lk, kPoll, ready);
    if (!ready() && peer_closed(a.fd)) {
      lk.unlock();
      a.runner->cancel(a.id);
      lk.lock();
      a.ch->cv.wait(lk, [&] { return a.ch->outcome.has_value(); });
      return false;
    }
  }
  return true;
}

class Streamer {
 public:
  Streamer(Admitted a, const text::Tokenizer& tok, double timeout_s, ServeMetrics* metrics)
      : a_(std::move(a)),
        detok_(tok, tok.vocab().model == "llama" && tok.vocab().add_space_prefix),
        timeout_s_(timeout_s),
        metrics_(metrics) {}

  bool pump(httplib::DataSink& sink) {
    std::vector<int32_t> toks;
    std::optional<Outcome> done;
    {
      std::unique_lock<std::mutex> lk(a_.ch->mu);
      a_.ch->cv.wait_for(lk, kPoll, [&] { return !a_.ch->tokens.empty() || a_.ch->outcome; });
      toks.swap(a_.ch->tokens);
      done = a_.ch->outcome;
    }
    auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
    if (a_.meta.chat && !sent_role_) {
      if (!write(role_event(a_.meta))) return gone();
      sent_role_ = true;
    }
    for (int32_t t : toks)
      if (!write(token_event(a_.meta, detok_.push(t), {t}))) return gone();
    if (!done) return toks.empty() && peer_closed(a_.fd) ? gone() : true;
    if (done->timed_out) {
      metrics_->timed_out(a_.meta.variant);
      if (!write(error_event(error_body(timeout_error(timeout_s_))))) return gone();
    } else {
      if (!write(finish_event(a_.meta, detok_.finish(), done->reason))) return gone();
      if (a_.include_usage && !write(usage_event(a_.meta, done->prompt_tokens,
                                                 static_cast<uint32_t>(done->tokens.size()))))
        return gone();
    }
    if (!write(done_event())) return gone();
    finished_ = true;
    sink.done();
    return true;
  }
  // The response ended early (write failed, peer closed, server stopping): free the request.
  bool gone() {
    if (!finished_) a_.runner->cancel(a_.id);
    finished_ = true;
    return false;
  }

 private:
  Admitted a_;
  text::Detokenizer detok_;
  double timeout_s_;
  ServeMetrics* metrics_;
  bool sent_role_ = false;
  bool finished_ = false;
};

// The engine request for `cr` on `runner`: its vocabulary, context and sampling defaults.
// Throws ApiError(400) when prompt + max_tokens exceed the context.
engine::RequestSpec make_spec(const CompletionRequest& cr, const EngineRunner& runner, bool chat,
                              ServeMetrics& metrics, const std::string& variant) {
  const text::Tokenizer* tok = runner.tokenizer();
  engine::RequestSpec spec;
  spec.prompt = cr.prompt_ids ? *cr.prompt_ids
                : chat ? chat_prompt_ids(runner.variant(), *tok, cr.messages, tok->vocab().add_bos)
                       : tok->encode(*cr.prompt_text, tok->vocab().add_bos);
  const Config& vc = runner.variant().config;
  const uint32_t ctx = runner.limits().max_context;
  const uint32_t n_prompt = static_cast<uint32_t>(spec.prompt.size());
  const uint32_t room = n_prompt < ctx ? ctx - n_prompt : 1;
  spec.max_new_tokens = cr.max_tokens.value_or(std::min(vc.sampling.max_tokens, room));
  if (uint64_t(n_prompt) + spec.max_new_tokens > ctx) {
    metrics.rejected(variant, "context_length");
    const std::string what = chat ? "messages" : "prompt";
    throw ApiError(400,
                   "This model's maximum context length is " + std::to_string(ctx) +
                       " tokens. However, you requested " +
                       std::to_string(n_prompt + uint64_t(spec.max_new_tokens)) + " tokens (" +
                       std::to_string(n_prompt) + " in the " + what + ", " +
                       std::to_string(spec.max_new_tokens) +
                       " for the completion). Please reduce the length of the " + what +
                       " or completion.",
                   "invalid_request_error", what, "context_length_exceeded");
  }
  spec.sampling.temperature = cr.temperature.value_or(vc.sampling.temperature);
  spec.sampling.top_p = cr.top_p.value_or(vc.sampling.top_p);
  spec.sampling.top_k = cr.top_k.value_or(vc.sampling.top_k);
  spec.sampling.seed = cr.seed.value_or(vc.sampling.seed);
  spec.stop_at_eos = !cr.ignore_eos;
  spec.priority = cr.priority.value_or(0);
  spec.simple_hint = cr.simple_hint;
  return spec;
}

}  // namespace

CompletionService::CompletionService(Router& router, ServeMetrics& metrics, std::string model_name)
    : router_(router), metrics_(metrics), model_name_(std::move(model_name)) {}

void CompletionService::handle(const httplib::Request& req, httplib::Response& res, bool chat) {
  const int64_t arrival = now_ns();
  try {
    const CompletionRequest cr = parse_completion_request(req.body, chat);
    const std::string rid = request_id(req, chat, next_id_);
    const std::string pinned = cr.model.empty() || cr.model == model_name_ ? "" : cr.model;
    Admitted a;
    const text::Tokenizer* tok = nullptr;
    double timeout_s = 600;
    // A variant that started draining between routing and submission refuses with `draining`;
    // the router has switched by then, so routing again finds the new one.
    for (int attempt = 0; !a.runner; ++attempt) {
      if (attempt == 8)
        throw ApiError(503, "No variant accepted the request while a swap was in progress; retry.",
                       "service_unavailable", "", "swap_in_progress");
      const auto d = router_.current();
      const auto route = router_.route(rid, pinned);
      if (!route || (!pinned.empty() && d && !d->find(pinned))) {  // a rollback reroutes pins
        if (!pinned.empty() && d)
          throw ApiError(404, "The model '" + cr.model + "' does not exist",
                         "invalid_request_error", "model", "model_not_found");
        throw ApiError(503, "No variant is loaded.", "service_unavailable", "", "no_variant");
      }
      timeout_s = d ? d->request_timeout_s : timeout_s;
      EngineRunner& runner = *route->primary;
      tok = runner.tokenizer();
      engine::RequestSpec spec = make_spec(cr, runner, chat, metrics_, route->primary_name);
      auto ch = std::make_shared<Channel>();
      std::shared_ptr<ShadowPair> pair;
      if (route->shadow) {
        const std::string p = route->primary_name, s = route->shadow_name;
        ServeMetrics* m = &metrics_;
        pair = std::make_shared<ShadowPair>(
            [m, p, s](const ShadowResult& r) { m->shadow_compared(p, s, r); },
            [m, s](const std::string& why) { m->shadow_skipped(s, why); });
      }
      Callbacks cb;
      cb.on_token = [ch](int32_t t) {
        std::lock_guard<std::mutex> lk(ch->mu);
        ch->tokens.push_back(t);
        ch->cv.notify_all();
      };
      cb.on_finish = [ch, pair](const Outcome& o) {
        {
          std::lock_guard<std::mutex> lk(ch->mu);
          ch->outcome = o;
        }
        ch->cv.notify_all();
        if (pair) pair->primary_done(o);
      };
      const int64_t deadline = arrival + static_cast<int64_t>(timeout_s * 1e9);
      const engine::RequestSpec shadow_spec = route->shadow ? spec : engine::RequestSpec{};
      const auto t = runner.submit(std::move(spec), std::move(cb), arrival, deadline);
      if (t.status == EngineRunner::Admit::draining) continue;
      if (t.status == EngineRunner::Admit::queue_full) {
        metrics_.rejected(route->primary_name, "queue_full");
        throw ApiError(429, "The server is overloaded: " + t.error + ". Retry later.",
                       "rate_limit_error", "", "queue_full");
      }
      if (t.status == EngineRunner::Admit::invalid) {
        metrics_.rejected(route->primary_name, "invalid");
        throw ApiError(400, "Invalid 'prompt': " + t.error + ".", "invalid_request_error",
                       chat ? "messages" : "prompt", "invalid_prompt");
      }
      metrics_.routed(route->primary_name, t.path);
      if (route->shadow) {
        Callbacks scb;
        scb.on_finish = [pair](const Outcome& o) { pair->shadow_done(o); };
        const auto st = route->shadow->submit(shadow_spec, std::move(scb), arrival, deadline);
        if (st.status != EngineRunner::Admit::ok)
          metrics_.shadow_skipped(route->shadow_name,
                                  st.status == EngineRunner::Admit::queue_full ? "queue_full"
                                  : st.status == EngineRunner::Admit::draining ? "draining"
                                                                               : "invalid");
      }
      a.runner = route->primary;
      a.id = t.id;
      a.ch = ch;
      a.meta = ResponseMeta{chat, rid, static_cast<int64_t>(std::time(nullptr)),
                            cr.model.empty() ? model_name_ : cr.model, route->primary_name};
    }
    a.include_usage = cr.include_usage;
    a.fd = connection_fd(req.local_port, req.remote_addr, req.remote_port);
    res.set_header("X-Request-Id", rid);
    res.set_header("X-Switchyard-Variant", a.meta.variant);
    res.set_header("X-Switchyard-Generation", std::to_string(a.runner->generation()));
    if (cr.stream) {
      // The headers wait for the first token (or the end): until they are out, a load balancer
      // in front may still send the request to another replica should this one die (HAProxy's
      // retry-on empty-response); after, it cannot.
      if (!wait_or_cancel(a, [&] { return !a.ch->tokens.empty() || a.ch->outcome.has_value(); })) {
        res.status = 499;
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      auto s = std::make_shared<Streamer>(a, *tok, timeout_s, &metrics_);
      res.set_chunked_content_provider(
          "text/event-stream", [s](size_t, httplib::DataSink& sink) { return s->pump(sink); },
          [s](bool ok) {
            if (!ok) s->gone();
          });
      return;
    }
    if (!wait_or_cancel(a, [&] { return a.ch->outcome.has_value(); })) {
      res.status = 499;  // nginx's "client closed request"; never reaches the client
      return;
    }
    std::unique_lock<std::mutex> lk(a.ch->mu);
    const Outcome o = *a.ch->outcome;
    lk.unlock();
    if (o.timed_out) {
      metrics_.timed_out(a.meta.variant);
      throw timeout_error(timeout_s);
    }
    res.set_content(
        completion_body(a.meta, tok->decode(o.tokens), o.tokens, o.reason, o.prompt_tokens),
        "application/json");
  } catch (const ApiError& e) {
    res.status = e.status;
    if (e.status == 429) res.set_header("Retry-After", "1");
    res.set_content(error_body(e), "application/json");
  }
}

}  // namespace sy::server
