#include "server/completion_service.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>

#include "host/host_api.h"
#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/choice_text.h"
#include "server/http/message.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "server/peer_watch.h"
#include "server/shadow.h"
#include "server/utf8.h"

namespace sy::server {
namespace {

// How often a waiting handler looks at its peer (disconnects are noticed this fast).
constexpr auto kPoll = std::chrono::milliseconds(50);

// One sampled token of one choice, as the engine thread hands it over.
struct TokenEvent {
  uint32_t choice = 0;
  int32_t token = 0;
  std::string text;  // final text it released (may be empty: held back or incomplete UTF-8)
  std::optional<text::TokenLogprob> logprob;
  size_t offset = 0;  // where the token starts in the choice's text
  std::vector<text::TokenLogprob> prompt_logprobs;  // with the first token, when echo asked
};

struct Finished {
  Outcome outcome;
  std::string tail;  // text still held back when it ended
};

// Tokens and finishes of one request's choices, from the engine thread to the HTTP thread.
struct Channel {
  explicit Channel(size_t n) : done(n) {}
  std::mutex mu;
  std::condition_variable cv;
  std::vector<TokenEvent> events;  // not yet consumed
  std::vector<std::optional<Finished>> done;
};

struct Submitted {
  std::shared_ptr<EngineRunner> runner;
  uint64_t id = 0;
};

// An accepted request.
struct Admitted {
  std::vector<Submitted> choices;
  Submitted shadow;  // runner null: no shadow run
  std::shared_ptr<Channel> ch;
  ResponseMeta meta;
  const text::Tokenizer* tok = nullptr;
  uint32_t prompt_tokens = 0;
  std::string echo;  // text before each choice's completion
  OutputSyntax syntax;      // chat: reasoning and tool calls to read out of the text
  std::string call_prefix;  // tool call ids: <prefix><choice>_<n>
  bool include_usage = false;
  double timeout_s = 600;
  int fd = -1;
  // The client is gone: nothing will read the answer, so its shadow copy stops too.
  void cancel_all() const {
    for (const auto& c : choices) c.runner->cancel(c.id);
    if (shadow.runner) shadow.runner->cancel(shadow.id);
  }
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

ApiError draining_error() {
  return ApiError(503,
                  "The server is draining: it finishes the requests it has and takes no new "
                  "ones; retry on another replica.",
                  "service_unavailable", "", "draining");
}

ApiError aborted_error() {
  return ApiError(503,
                  "The request was aborted before it finished: the server is stopping or its "
                  "variant failed. Retry.",
                  "service_unavailable", "", "request_aborted");
}

std::string request_id(const http::Request& req, bool chat, std::atomic<uint64_t>& next) {
  std::string id = req.get_header_value("X-Request-Id");
  if (id.size() > 256)
    throw ApiError(400, "Invalid 'X-Request-Id' header: longer than 256 characters.",
                   "invalid_request_error", "X-Request-Id");
  if (id.empty()) id = std::string(chat ? "chatcmpl-" : "cmpl-") + std::to_string(next++);
  return id;
}

// Changes whenever the variant's configuration does (OpenAI's system_fingerprint).
std::string fingerprint_of(const std::string& config_fingerprint) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : config_fingerprint) h = (h ^ c) * 1099511628211ull;
  char buf[32];
  std::snprintf(buf, sizeof buf, "fp_%012llx",
                static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

// A token's text in logprobs. One that is not valid UTF-8 by itself (a byte of a longer
// character) is spelled "bytes:\\xNN..." as OpenAI does, so distinct tokens stay distinct keys.
std::string raw_piece(const text::Tokenizer& tok, int32_t id) {
  try {
    return tok.piece(id);
  } catch (const std::exception&) {
    return "";  // an id the model has beyond the vocabulary's tokens
  }
}

std::string shown_piece(const std::string& p) {
  if (valid_utf8(p)) return p;
  std::string out = "bytes:";
  for (unsigned char c : p) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out;
}

LogprobEntry entry_of(const text::Tokenizer& tok, const text::TokenLogprob& lp, size_t offset) {
  LogprobEntry e;
  e.bytes = raw_piece(tok, lp.token);
  e.token = shown_piece(e.bytes);
  e.logprob = lp.logprob;
  e.text_offset = offset;
  for (const auto& [id, v] : lp.top) {
    const std::string raw = raw_piece(tok, id);
    e.top.push_back({shown_piece(raw), raw, v});
  }
  return e;
}

// The prompt's tokens as echo's logprobs show them: the first without a logprob, offsets into
// the echoed text (less the space prefix a decode drops).
std::vector<LogprobEntry> prompt_entries(const text::Tokenizer& tok, const std::string& echo,
                                         const std::vector<text::TokenLogprob>& lps) {
  std::vector<LogprobEntry> out;
  size_t total = 0;
  for (const auto& lp : lps) total += raw_piece(tok, lp.token).size();
  const size_t shift = total > echo.size() ? total - echo.size() : 0;
  size_t at = 0;
  for (size_t i = 0; i < lps.size(); ++i) {
    LogprobEntry e = entry_of(tok, lps[i], at > shift ? at - shift : 0);
    e.first = i == 0;
    at += e.bytes.size();
    out.push_back(std::move(e));
  }
  return out;
}

ApiError context_error(bool chat, uint32_t ctx, const std::string& requested) {
  const std::string what = chat ? "messages" : "prompt";
  return ApiError(400,
                  "This model's maximum context length is " + std::to_string(ctx) +
                      " tokens. However, " + requested + ". Please reduce the length of the " +
                      what + " or completion.",
                  "invalid_request_error", what, "context_length_exceeded");
}

// The longest token text of the vocabulary: no token covers more input bytes.
size_t longest_piece(const text::Tokenizer& tok) {
  size_t m = 1;
  for (const auto& t : tok.vocab().tokens) m = std::max(m, t.size());
  return m;
}

// The engine request for `cr` on `runner`: its vocabulary, context and sampling defaults.
// Throws ApiError(400) when prompt + max_tokens exceed the context, before tokenizing a text
// that cannot fit. syntax: set, for a chat, to how its template's answers read.
engine::RequestSpec make_spec(const CompletionRequest& cr, const EngineRunner& runner,
                              const CompletionLimits& limits, ServeMetrics& metrics,
                              const std::string& variant, OutputSyntax* syntax) {
  const bool chat = cr.chat;
  const text::Tokenizer* tok = runner.tokenizer();
  const Config& vc = runner.variant().config;
  const uint32_t ctx = runner.limits().max_context;
  if (cr.max_tokens && limits.max_tokens && *cr.max_tokens > limits.max_tokens)
    throw ApiError(400,
                   "Invalid '" + cr.max_tokens_param +
                       "': integer above maximum value. Expected a value <= " +
                       std::to_string(limits.max_tokens) + ", but got " +
                       std::to_string(*cr.max_tokens) + " instead.",
                   "invalid_request_error", cr.max_tokens_param, "invalid_value");
  const uint32_t n_vocab = static_cast<uint32_t>(runner.variant().model->info().n_vocab);
  for (const auto& [id, bias] : cr.logit_bias)
    if (static_cast<uint32_t>(id) >= n_vocab)
      throw ApiError(400,
                     "Invalid 'logit_bias': token id " + std::to_string(id) +
                         " is outside the vocabulary of " + std::to_string(n_vocab) + " tokens.",
                     "invalid_request_error", "logit_bias", "invalid_value");
  for (int32_t id : cr.stop_token_ids)
    if (static_cast<uint32_t>(id) >= n_vocab)
      throw ApiError(400,
                     "Invalid 'stop_token_ids': token id " + std::to_string(id) +
                         " is outside the vocabulary of " + std::to_string(n_vocab) + " tokens.",
                     "invalid_request_error", "stop_token_ids", "invalid_value");
  engine::RequestSpec spec;
  if (cr.prompt_ids) {
    spec.prompt = *cr.prompt_ids;
  } else {
    // Each token covers at most the longest token text, so a text longer than the context
    // times that cannot fit: refuse it without tokenizing (and allocating) it all. A chat's
    // template adds markup, so its messages' text is a lower bound of what it tokenizes.
    size_t text_bytes = 0;
    if (chat)
      for (const auto& m : cr.messages) text_bytes += m.content.size();
    else
      text_bytes = cr.prompt_text->size();
    if (text_bytes > ctx) {
      const size_t longest = longest_piece(*tok);
      if (text_bytes / longest > ctx) {
        metrics.rejected(variant, "context_length");
        throw context_error(chat, ctx,
                            std::string(chat ? "your messages need" : "your prompt needs") +
                                " at least " + std::to_string(text_bytes / longest) + " tokens");
      }
    }
    if (chat) {
      ChatPrompt cp = chat_prompt(runner.variant(), *tok, cr, tok->vocab().add_bos);
      spec.prompt = std::move(cp.ids);
      if (cp.grammar) spec.sampling.grammar = text::TokenGrammar::make(*tok, cp.grammar);
      if (syntax) *syntax = cp.syntax;
    } else if (cr.prompt_text)
      spec.prompt = text::tokenize(*tok, *cr.prompt_text,
                                   {tok->vocab().add_bos, false, tok->vocab().add_eos});
  }
  const uint32_t n_prompt = static_cast<uint32_t>(spec.prompt.size());
  const uint32_t room = n_prompt < ctx ? ctx - n_prompt : 1;
  uint32_t fallback = std::min(vc.sampling.max_tokens, room);
  if (limits.max_tokens) fallback = std::min(fallback, limits.max_tokens);
  spec.max_new_tokens = cr.max_tokens.value_or(std::max<uint32_t>(fallback, 1));
  if (uint64_t(n_prompt) + spec.max_new_tokens > ctx) {
    metrics.rejected(variant, "context_length");
    const std::string what = chat ? "messages" : "prompt";
    throw context_error(chat, ctx,
                        "you requested " +
                            std::to_string(n_prompt + uint64_t(spec.max_new_tokens)) + " tokens (" +
                            std::to_string(n_prompt) + " in the " + what + ", " +
                            std::to_string(spec.max_new_tokens) + " for the completion)");
  }
  spec.sampling.temperature = cr.temperature.value_or(vc.sampling.temperature);
  spec.sampling.top_p = cr.top_p.value_or(vc.sampling.top_p);
  spec.sampling.top_k = cr.top_k.value_or(vc.sampling.top_k);
  spec.sampling.seed = cr.seed.value_or(vc.sampling.seed);
  spec.sampling.min_p = cr.min_p.value_or(0.0f);
  spec.sampling.typical_p = cr.typical_p.value_or(1.0f);
  spec.sampling.repetition_penalty = cr.repetition_penalty.value_or(1.0f);
  spec.sampling.presence_penalty = cr.presence_penalty;
  spec.sampling.frequency_penalty = cr.frequency_penalty;
  spec.sampling.logit_bias = cr.logit_bias;
  spec.sampling.logprobs = cr.logprobs;
  spec.prompt_logprobs = cr.echo && cr.logprobs >= 0;
  if (cr.grammar) spec.sampling.grammar = text::TokenGrammar::make(*tok, cr.grammar);
  spec.stop_at_eos = !cr.ignore_eos;
  // The engine runs a larger priority first; vLLM's clients mean the reverse.
  spec.priority = cr.priority.value_or(0) * (limits.smaller_priority_first ? -1 : 1);
  spec.simple_hint = cr.simple_hint;
  return spec;
}

// Callbacks for choice `index`: its text is cut at stop strings and stop tokens on the engine
// thread, which ends the request at the token that completed the match.
Callbacks choice_callbacks(std::shared_ptr<Channel> ch, uint32_t index, const text::Tokenizer& tok,
                           const CompletionRequest& cr, std::shared_ptr<ShadowPair> pair) {
  auto text = std::make_shared<ChoiceText>(tok, cr.stop, cr.stop_token_ids);
  Callbacks cb;
  cb.on_token = [ch, index, text](int32_t t, const text::TokenLogprob* lp,
                                  const std::vector<text::TokenLogprob>* prompt_lp) {
    TokenEvent ev;
    ev.choice = index;
    ev.token = t;
    ev.text = text->push(t);
    ev.offset = text->last_offset();
    if (lp) ev.logprob = *lp;
    if (prompt_lp) ev.prompt_logprobs = *prompt_lp;
    {
      std::lock_guard<std::mutex> lk(ch->mu);
      ch->events.push_back(std::move(ev));
    }
    ch->cv.notify_all();
    return text->stopped();
  };
  cb.on_finish = [ch, index, text, pair](const Outcome& o) {
    {
      std::lock_guard<std::mutex> lk(ch->mu);
      ch->done[index] = Finished{o, text->finish()};
    }
    ch->cv.notify_all();
    if (pair) pair->primary_done(o);
  };
  return cb;
}

// The shadow copy ends at the same stop strings and tokens, so its tokens compare exactly.
Callbacks shadow_callbacks(const text::Tokenizer& tok, const CompletionRequest& cr,
                           std::shared_ptr<ShadowPair> pair) {
  auto text = std::make_shared<ChoiceText>(tok, cr.stop, cr.stop_token_ids);
  Callbacks cb;
  cb.on_token = [text](int32_t t, const text::TokenLogprob*,
                       const std::vector<text::TokenLogprob>*) {
    text->push(t);
    return text->stopped();
  };
  cb.on_finish = [pair](const Outcome& o) { pair->shadow_done(o); };
  return cb;
}

// What the HTTP thread has of the choices so far; shared by both answer forms.
class Collector {
 public:
  explicit Collector(const Admitted& a)
      : a_(a), parts_(a.choices.size()), reported_(a.choices.size(), false) {
    for (uint32_t i = 0; i < parts_.size(); ++i) parts_[i].index = i;
  }
  // Moves what arrived into `events` / newly finished choice indexes; waits up to kPoll.
  void take(std::vector<TokenEvent>& events, std::vector<uint32_t>& finished) {
    std::unique_lock<std::mutex> lk(a_.ch->mu);
    a_.ch->cv.wait_for(lk, kPoll, [&] { return !a_.ch->events.empty() || newly_done(); });
    events.swap(a_.ch->events);
    for (uint32_t i = 0; i < parts_.size(); ++i)
      if (a_.ch->done[i] && !reported_[i]) {
        reported_[i] = true;
        finished.push_back(i);
        results_[i] = *a_.ch->done[i];
      }
  }
  LogprobEntry entry(const TokenEvent& ev) const {
    return entry_of(*a_.tok, *ev.logprob, ev.offset + a_.echo.size());
  }
  const Finished& result(uint32_t i) const { return results_.at(i); }
  bool all_done() const { return results_.size() == parts_.size(); }
  std::vector<ChoicePart>& parts() { return parts_; }
  // A timed-out or aborted choice spoils the whole answer.
  std::optional<ApiError> failure() const {
    for (const auto& [i, f] : results_) {
      if (f.outcome.timed_out) return timeout_error(a_.timeout_s);
      if (f.outcome.reason == engine::FinishReason::aborted) return aborted_error();
    }
    return std::nullopt;
  }
  // The choices share the prompt: the first one's cache hits are the request's.
  Usage usage(uint32_t prompt_tokens) const {
    Usage u{prompt_tokens, 0, 0};
    for (const auto& [i, f] : results_)
      u.completion += static_cast<uint32_t>(f.outcome.tokens.size());
    if (!results_.empty()) u.cached = results_.begin()->second.outcome.cached_tokens;
    return u;
  }

 private:
  bool newly_done() const {
    for (uint32_t i = 0; i < parts_.size(); ++i)
      if (a_.ch->done[i] && !reported_[i]) return true;
    return false;
  }
  const Admitted& a_;
  std::vector<ChoicePart> parts_;
  std::vector<bool> reported_;
  std::map<uint32_t, Finished> results_;
};

// The choice's text as the chat output read it: content, reasoning, tool calls.
void read(ChoicePart& p, ChatOutput::Delta d) {
  p.text += d.content;
  p.reasoning += d.reasoning;
  merge_calls(p.tool_calls, std::move(d.calls));
}

// A choice that called a tool and then stopped answers finish_reason "tool_calls".
const char* finish_reason(engine::FinishReason r, const ChatOutput& out) {
  return r == engine::FinishReason::stop && out.calls() > 0 ? "tool_calls"
                                                            : openai_finish_reason(r);
}

// Waits until a choice sent its first token or finished. False when the client went away
// first: every copy of the request is cancelled (nobody will read the answer).
bool wait_for_first_event(const Admitted& a) {
  std::unique_lock<std::mutex> lk(a.ch->mu);
  auto ready = [&] {
    if (!a.ch->events.empty()) return true;
    for (const auto& d : a.ch->done)
      if (d) return true;
    return false;
  };
  while (!a.ch->cv.wait_for(lk, kPoll, ready)) {
    if (peer_closed(a.fd)) {
      lk.unlock();
      a.cancel_all();
      return false;
    }
  }
  return true;
}

// Streams one request's events until every choice finished; false ends the response.
class Streamer {
 public:
  Streamer(Admitted a, ServeMetrics* metrics) : a_(std::move(a)), collect_(a_), metrics_(metrics) {}

  bool pump(http::ChunkSink& sink) {
    auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
    if (!started_) {
      started_ = true;
      for (uint32_t i = 0; i < a_.choices.size(); ++i)
        outputs_.emplace_back(a_.syntax, a_.call_prefix + std::to_string(i) + "_");
      echoed_.assign(a_.choices.size(), false);
      for (uint32_t i = 0; i < a_.choices.size(); ++i) {
        if (a_.meta.chat && !write(role_event(a_.meta, i))) return gone();
        // With logprobs the echo waits for the prompt's, which come with the first token.
        if (!a_.meta.logprobs && !echo(sink, i, {})) return gone();
      }
    }
    std::vector<TokenEvent> events;
    std::vector<uint32_t> finished;
    collect_.take(events, finished);
    for (const TokenEvent& ev : events) {
      if (!ev.prompt_logprobs.empty() && !echo(sink, ev.choice, ev.prompt_logprobs)) return gone();
      ChoicePart p;
      p.index = ev.choice;
      read(p, outputs_[ev.choice].feed(ev.text));
      p.tokens = {ev.token};
      if (ev.logprob) p.logprobs.push_back(collect_.entry(ev));
      if (!write(chunk_event(a_.meta, p))) return gone();
    }
    for (uint32_t i : finished) {
      if (auto err = collect_.failure()) {
        if (err->status == 504) metrics_->timed_out(a_.meta.variant);
        a_.cancel_all();
        if (!write(error_event(error_body(*err))) || !write(done_event())) return gone();
        finished_ = true;
        sink.done();
        return true;
      }
      if (!echo(sink, i, collect_.result(i).outcome.prompt_logprobs)) return gone();  // none sent
      ChoicePart p;
      p.index = i;
      ChatOutput& out = outputs_[i];
      read(p, out.feed(collect_.result(i).tail));
      read(p, out.finish());
      p.finish_reason = finish_reason(collect_.result(i).outcome.reason, out);
      if (!write(chunk_event(a_.meta, p))) return gone();
    }
    if (!collect_.all_done())
      return events.empty() && finished.empty() && peer_closed(a_.fd) ? gone() : true;
    if (a_.include_usage && !write(usage_event(a_.meta, collect_.usage(a_.prompt_tokens))))
      return gone();
    if (!write(done_event())) return gone();
    finished_ = true;
    sink.done();
    return true;
  }
  // The response ended early (write failed, peer closed, server stopping): free the request.
  bool gone() {
    if (!finished_) a_.cancel_all();
    finished_ = true;
    return false;
  }

 private:
  // Choice i's echoed prompt, once, as its first chunk of text; with the prompt's logprobs
  // when the request asked for logprobs. False: the write failed.
  bool echo(http::ChunkSink& sink, uint32_t i, const std::vector<text::TokenLogprob>& lps) {
    if (a_.echo.empty() || echoed_[i]) return true;
    echoed_[i] = true;
    ChoicePart part;
    part.index = i;
    part.text = a_.echo;
    if (a_.meta.logprobs) part.logprobs = prompt_entries(*a_.tok, a_.echo, lps);
    const std::string s = chunk_event(a_.meta, part);
    return sink.write(s.data(), s.size());
  }

  Admitted a_;
  Collector collect_;
  ServeMetrics* metrics_;
  std::vector<ChatOutput> outputs_;  // per choice
  std::vector<bool> echoed_;         // per choice: its echo went out
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace

CompletionService::CompletionService(Router& router, ServeMetrics& metrics, std::string model_name,
                                     CompletionLimits limits)
    : router_(router), metrics_(metrics), model_name_(std::move(model_name)), limits_(limits) {}

void CompletionService::handle(const http::Request& req, http::Response& res, bool chat) {
  const int64_t arrival = now_ns();
  try {
    const CompletionRequest cr = parse_completion_request(req.body, chat, limits_.json);
    const std::string rid = request_id(req, chat, next_id_);
    const std::string pinned = cr.model.empty() || cr.model == model_name_ ? "" : cr.model;
    Admitted a;
    // A variant that started draining between routing and submission refuses with `draining`;
    // the router has switched by then, so routing again finds the new one.
    for (int attempt = 0; a.choices.empty(); ++attempt) {
      if (draining_) throw draining_error();
      if (attempt == 8)
        throw ApiError(503, "No variant accepted the request while a swap was in progress; retry.",
                       "service_unavailable", "", "swap_in_progress");
      const auto d = router_.current();
      const auto route = router_.route(rid, pinned);
      if (!route || (!pinned.empty() && d && !d->find(pinned))) {  // a rollback reroutes pins
        if (!pinned.empty() && d)
          throw ApiError(404, "The model '" + cr.model.substr(0, 256) + "' does not exist",
                         "invalid_request_error", "model", "model_not_found");
        throw ApiError(503, "No variant is loaded.", "service_unavailable", "", "no_variant");
      }
      a.timeout_s = d ? d->request_timeout_s : a.timeout_s;
      EngineRunner& runner = *route->primary;
      a.tok = runner.tokenizer();
      const engine::RequestSpec base =
          make_spec(cr, runner, limits_, metrics_, route->primary_name, &a.syntax);
      a.call_prefix = "call_" + rid + "_";
      a.ch = std::make_shared<Channel>(cr.n);
      std::shared_ptr<ShadowPair> pair;
      if (route->shadow) {
        const std::string p = route->primary_name, s = route->shadow_name;
        ServeMetrics* m = &metrics_;
        pair = std::make_shared<ShadowPair>(
            [m, p, s](const ShadowResult& r) { m->shadow_compared(p, s, r); },
            [m, s](const std::string& why) { m->shadow_skipped(s, why); });
      }
      const int64_t deadline = arrival + static_cast<int64_t>(a.timeout_s * 1e9);
      bool retry = false;
      for (uint32_t i = 0; i < cr.n && !retry; ++i) {
        engine::RequestSpec spec = base;
        spec.sampling.seed = base.sampling.seed + i;  // choices differ when they sample
        const auto t = runner.submit(std::move(spec),
                                     choice_callbacks(a.ch, i, *a.tok, cr, i == 0 ? pair : nullptr),
                                     arrival, deadline);
        if (t.status == EngineRunner::Admit::ok) {
          if (i == 0) metrics_.routed(route->primary_name, t.path);
          a.choices.push_back({route->primary, t.id});
          continue;
        }
        a.cancel_all();  // the choices already queued would answer nobody
        a.choices.clear();
        if (t.status == EngineRunner::Admit::draining) {
          retry = true;
        } else if (t.status == EngineRunner::Admit::queue_full) {
          metrics_.rejected(route->primary_name, "queue_full");
          throw ApiError(429, "The server is overloaded: " + t.error + ". Retry later.",
                         "rate_limit_error", "", "queue_full");
        } else {
          metrics_.rejected(route->primary_name, "invalid");
          throw ApiError(400, "Invalid 'prompt': " + t.error + ".", "invalid_request_error",
                         chat ? "messages" : "prompt", "invalid_prompt");
        }
      }
      if (retry) continue;
      if (route->shadow) {
        const auto st =
            route->shadow->submit(base, shadow_callbacks(*a.tok, cr, pair), arrival, deadline);
        if (st.status == EngineRunner::Admit::ok)
          a.shadow = {route->shadow, st.id};
        else
          metrics_.shadow_skipped(route->shadow_name,
                                  st.status == EngineRunner::Admit::queue_full ? "queue_full"
                                  : st.status == EngineRunner::Admit::draining ? "draining"
                                                                               : "invalid");
      }
      a.prompt_tokens = static_cast<uint32_t>(base.prompt.size());
      a.meta = ResponseMeta{chat,
                            rid,
                            static_cast<int64_t>(std::time(nullptr)),
                            cr.model.empty() ? model_name_ : cr.model,
                            route->primary_name,
                            "",
                            cr.logprobs >= 0};
      if (d)
        if (const auto* e = d->find(route->primary_name))
          a.meta.system_fingerprint = fingerprint_of(e->fingerprint);
      if (cr.echo) a.echo = cr.prompt_text ? *cr.prompt_text : a.tok->decode(*cr.prompt_ids);
    }
    a.include_usage = cr.include_usage;
    a.fd = req.fd;
    res.set_header("X-Request-Id", rid);
    res.set_header("X-Switchyard-Variant", a.meta.variant);
    res.set_header("X-Switchyard-Generation", std::to_string(a.choices[0].runner->generation()));
    if (cr.stream) {
      // The headers wait for the first token (or the end): until they are out, a load balancer
      // in front may still send the request to another replica should this one die (HAProxy's
      // retry-on empty-response); after, it cannot.
      if (!wait_for_first_event(a)) {
        res.status = 499;  // nginx's "client closed request"; never reaches the client
        res.close = true;
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      auto s = std::make_shared<Streamer>(std::move(a), &metrics_);
      res.set_chunked_content_provider(
          "text/event-stream", [s](http::ChunkSink& sink) { return s->pump(sink); },
          [s](bool ok) {
            if (!ok) s->gone();
          });
      return;
    }
    Collector collect(a);
    std::vector<TokenEvent> events;
    std::vector<uint32_t> finished;
    while (!collect.all_done()) {
      events.clear();
      collect.take(events, finished);
      for (const TokenEvent& ev : events) {
        ChoicePart& p = collect.parts()[ev.choice];
        p.text += ev.text;
        if (ev.logprob) p.logprobs.push_back(collect.entry(ev));
      }
      if (!collect.all_done() && peer_closed(a.fd)) {
        a.cancel_all();    // nobody will read the answer
        res.status = 499;  // nginx's "client closed request"; never reaches the client
        res.close = true;
        return;
      }
    }
    if (auto err = collect.failure()) {
      if (err->status == 504) metrics_.timed_out(a.meta.variant);
      throw *err;
    }
    for (ChoicePart& p : collect.parts()) {
      const Finished& f = collect.result(p.index);
      const std::string text = a.echo + p.text + f.tail;
      ChatOutput out(a.syntax, a.call_prefix + std::to_string(p.index) + "_");
      p.text.clear();
      read(p, out.feed(text));
      read(p, out.finish());
      p.tokens = f.outcome.tokens;
      p.finish_reason = finish_reason(f.outcome.reason, out);
      if (!f.outcome.prompt_logprobs.empty()) {
        std::vector<LogprobEntry> echoed =
            prompt_entries(*a.tok, a.echo, f.outcome.prompt_logprobs);
        p.logprobs.insert(p.logprobs.begin(), echoed.begin(), echoed.end());
      }
    }
    res.set_content(completion_body(a.meta, collect.parts(), collect.usage(a.prompt_tokens)),
                    "application/json");
  } catch (const ApiError& e) {
    res.status = e.status;
    if (e.status == 429 || e.status == 503) res.set_header("Retry-After", "1");
    res.set_content(error_body(e), "application/json");
  }
}

}  // namespace sy::server
