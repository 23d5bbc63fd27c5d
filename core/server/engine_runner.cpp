#include "server/engine_runner.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <stdexcept>

#include "engine/engine_loop.h"
#include "host/host_api.h"
#include "host/log.h"

namespace sy::server {

EngineRunner::EngineRunner(std::string name, std::unique_ptr<engine::Variant> v, uint32_t max_queue,
                           RunnerObserver* observer, uint64_t generation)
    : name_(std::move(name)),
      v_(std::move(v)),
      max_queue_(max_queue),
      observer_(observer),
      generation_(generation) {
  snap_.variant = name_;
  snap_.kv_total = v_->cache->pool().total();
  v_->engine->on_token = [this](const engine::Request& r, int32_t tok) {
    auto it = live_.find(r.id);
    const text::TokenLogprob* lp =
        r.spec.sampling.logprobs >= 0 && !r.logprobs.empty() ? &r.logprobs.back() : nullptr;
    const auto* prompt_lp =
        r.spec.prompt_logprobs && r.output.size() == 1 ? &r.prompt_logprobs : nullptr;
    if (it != live_.end() && it->second.cb.on_token && it->second.cb.on_token(tok, lp, prompt_lp))
      stops_.push_back(r.id);
    if (observer_) observer_->on_token(name_, r);
    touched_.push_back(r.id);
  };
  thread_ = std::thread([this] { loop(); });
}

EngineRunner::~EngineRunner() {
  shutdown();
}

void EngineRunner::shutdown() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    snap_.draining = true;
  }
  cv_.notify_all();
  std::call_once(joined_, [this] { thread_.join(); });
}

EngineRunner::Ticket EngineRunner::submit(engine::RequestSpec spec, Callbacks cb,
                                          int64_t arrival_ns, int64_t deadline_ns) {
  auto s = std::make_unique<Submission>();
  s->spec = std::move(spec);
  s->cb = std::move(cb);
  s->arrival_ns = arrival_ns;
  s->deadline_ns = deadline_ns;
  std::future<Ticket> accepted = s->accepted.get_future();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_ || draining_) return {Admit::draining, 0, "variant '" + name_ + "' is draining"};
    if (pending_.size() + snap_.waiting >= max_queue_)
      return {Admit::queue_full, 0,
              "the queue of variant '" + name_ + "' is full (" + std::to_string(max_queue_) +
                  " requests waiting)"};
    pending_.push_back(std::move(s));
    snap_.pending = static_cast<uint32_t>(pending_.size());
  }
  cv_.notify_all();
  return accepted.get();
}

void EngineRunner::cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    cancels_.push_back(id);
  }
  cv_.notify_all();
}

void EngineRunner::start_drain() {
  std::lock_guard<std::mutex> lk(mu_);
  draining_ = true;
  snap_.draining = true;
}

bool EngineRunner::wait_drained(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lk(mu_);
  return idle_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] {
    return draining_ && pending_.empty() && snap_.running == 0 && snap_.waiting == 0;
  });
}

RunnerSnapshot EngineRunner::snapshot() const {
  RunnerSnapshot s;
  {
    std::lock_guard<std::mutex> lk(mu_);
    s = snap_;
  }
  s.counters = v_->engine->counters().snapshot();  // thread-safe
  return s;
}

// Engine thread: hands submissions to the engine, which checks them (context, vocab, blocks).
void EngineRunner::intake(std::vector<std::unique_ptr<Submission>>& subs) {
  for (auto& s : subs) {
    Ticket t;
    try {
      t.id = v_->engine->submit(std::move(s->spec), s->arrival_ns);
      t.path = v_->engine->request(t.id).spec.path;  // triage ran in submit
      live_[t.id] = Live{std::move(s->cb), s->deadline_ns};
      if (v_->engine->request(t.id).spec.max_new_tokens == 0) scoring_.push_back(t.id);
    } catch (const std::exception& e) {
      t.status = Admit::invalid;
      t.error = e.what();
    }
    s->accepted.set_value(std::move(t));
  }
  subs.clear();
}

// Engine thread: reports a finished (or now aborted) request and drops it from the engine.
void EngineRunner::end(uint64_t id, bool timed_out, bool stopped) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  engine::Engine& e = *v_->engine;
  if (e.request(id).finish == engine::FinishReason::none) e.cancel(id);
  const engine::Request& r = e.request(id);
  Outcome o;
  o.reason = stopped ? engine::FinishReason::stop : r.finish;
  o.timed_out = timed_out;
  o.tokens = r.output;
  o.prompt_tokens = static_cast<uint32_t>(r.spec.prompt.size());
  o.cached_tokens = std::min(r.prefix_hit_tokens, o.prompt_tokens);
  o.num_preemptions = r.num_preemptions;
  o.path = r.spec.path;
  o.arrival_ns = r.arrival_ns;
  o.first_scheduled_ns = r.first_scheduled_ns;
  o.finish_ns = r.finish_ns;
  o.token_ns = r.token_ns;
  o.logprobs = r.logprobs;
  o.prompt_logprobs = r.prompt_logprobs;
  Callbacks cb = std::move(it->second.cb);
  live_.erase(it);
  e.forget(id);
  if (observer_) observer_->on_finish(name_, o);
  finished_.emplace_back(std::move(cb), std::move(o));
}

void EngineRunner::report_finished() {
  for (auto& [cb, o] : finished_)
    if (cb.on_finish) cb.on_finish(o);
  finished_.clear();
}

void EngineRunner::publish_snapshot() {
  const auto& pool = v_->cache->pool();
  {
    std::lock_guard<std::mutex> lk(mu_);
    snap_.running = static_cast<uint32_t>(v_->engine->n_running());
    snap_.waiting = static_cast<uint32_t>(v_->engine->n_waiting());
    snap_.pending = static_cast<uint32_t>(pending_.size());
    snap_.kv_used = pool.total() - pool.free_count();
  }
  idle_cv_.notify_all();
}

// The runner as the engine loop's work source: submissions and cancellations from other
// threads, request deadlines, and the snapshot and finishes reported after every step.
class EngineRunner::Source : public engine::WorkSource {
 public:
  explicit Source(EngineRunner& r) : r_(r) {}

  void intake(engine::Engine&) override {
    {
      std::lock_guard<std::mutex> lk(r_.mu_);
      subs_.swap(r_.pending_);
      cancels_.swap(r_.cancels_);
      r_.snap_.pending = 0;
      r_.snap_.waiting += static_cast<uint32_t>(subs_.size());  // queued until published
      stop_ = r_.stop_;
    }
    r_.intake(subs_);
    for (uint64_t id : cancels_) r_.end(id, false);
    cancels_.clear();
    if (stop_) return;
    const int64_t now = now_ns();
    std::vector<uint64_t> expired;
    for (const auto& [id, l] : r_.live_)
      if (l.deadline_ns && now >= l.deadline_ns) expired.push_back(id);
    for (uint64_t id : expired) r_.end(id, true);
    r_.publish_snapshot();
    r_.report_finished();
  }

  bool keep_going(const engine::Engine&) override { return !stop_; }

  // New work, a cancellation or stop cuts the sleep short.
  void wait(const engine::Engine&, int64_t until_ns) override {
    std::unique_lock<std::mutex> lk(r_.mu_);
    auto ready = [&] { return r_.stop_ || !r_.pending_.empty() || !r_.cancels_.empty(); };
    if (until_ns == INT64_MAX) {
      r_.cv_.wait(lk, ready);
    } else {
      const int64_t left = until_ns - now_ns();
      if (left > 0) r_.cv_.wait_for(lk, std::chrono::nanoseconds(left), ready);
    }
  }

  void before_step(engine::Engine&) override { r_.touched_.clear(); }

  void after_step(engine::Engine& e, const engine::StepStats& st, int64_t, int64_t dur) override {
    if (r_.observer_ && st.n_seqs) r_.observer_->on_step(r_.name_, st, dur);
    for (uint64_t id : r_.stops_)  // a stop string matched: ends as a stop
      if (r_.live_.count(id)) r_.end(id, false, true);
    r_.stops_.clear();
    for (uint64_t id : r_.touched_)
      if (r_.live_.count(id) && e.request(id).finish != engine::FinishReason::none)
        r_.end(id, false);
    std::erase_if(r_.scoring_, [&](uint64_t id) {
      if (!r_.live_.count(id)) return true;  // ended otherwise (cancelled, expired)
      if (e.request(id).finish == engine::FinishReason::none) return false;
      r_.end(id, false);
      return true;
    });
    r_.publish_snapshot();
    r_.report_finished();
  }

  // A failed forward pass leaves the batch unusable: abort what is running, keep serving.
  void step_failed(engine::Engine& e, const std::exception& ex) override {
    logger()->error("variant {}: step failed: {}; aborting the running requests", r_.name_,
                    ex.what());
    std::vector<uint64_t> ids;
    for (const auto& [id, l] : r_.live_)
      if (e.request(id).running) ids.push_back(id);
    for (uint64_t id : ids) r_.end(id, false);
    r_.stops_.clear();
    r_.publish_snapshot();
    r_.report_finished();
  }

 private:
  EngineRunner& r_;
  std::vector<std::unique_ptr<Submission>> subs_;
  std::vector<uint64_t> cancels_;
  bool stop_ = false;
};

void EngineRunner::loop() {
  Source source(*this);
  engine::EngineLoop::run(*v_->engine, source);
  // Stopping: whatever is left ends as aborted, so no caller waits forever.
  std::vector<uint64_t> ids;
  for (const auto& [id, l] : live_) ids.push_back(id);
  for (uint64_t id : ids) end(id, false);
  publish_snapshot();
  report_finished();
  std::lock_guard<std::mutex> lk(mu_);
  for (auto& s : pending_)
    s->accepted.set_value({Admit::draining, 0, "variant '" + name_ + "' stopped"});
  pending_.clear();
}

}  // namespace sy::server
