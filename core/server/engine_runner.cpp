#include "server/engine_runner.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

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
    if (it != live_.end() && it->second.cb.on_token && it->second.cb.on_token(tok, lp))
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
  std::lock_guard<std::mutex> lk(mu_);
  return snap_;
}

// Engine thread: hands submissions to the engine, which checks them (context, vocab, blocks).
void EngineRunner::intake(std::vector<std::unique_ptr<Submission>>& subs) {
  for (auto& s : subs) {
    Ticket t;
    try {
      t.id = v_->engine->submit(std::move(s->spec), s->arrival_ns);
      t.path = v_->engine->request(t.id).spec.path;  // triage ran in submit
      live_[t.id] = Live{std::move(s->cb), s->deadline_ns};
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
  o.num_preemptions = r.num_preemptions;
  o.path = r.spec.path;
  o.arrival_ns = r.arrival_ns;
  o.first_scheduled_ns = r.first_scheduled_ns;
  o.finish_ns = r.finish_ns;
  o.token_ns = r.token_ns;
  o.logprobs = r.logprobs;
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

void EngineRunner::loop() {
  engine::Engine& e = *v_->engine;
  std::vector<std::unique_ptr<Submission>> subs;
  std::vector<uint64_t> cancels;
  int64_t wait_ns = 0;  // what the scheduler asked for when the last step ran nothing
  for (;;) {
    bool stop;
    {
      std::unique_lock<std::mutex> lk(mu_);
      auto ready = [&] { return stop_ || !pending_.empty() || !cancels_.empty(); };
      // Sleep while idle, or through the scheduler's wait window (new work cuts it short).
      if (e.idle())
        cv_.wait(lk, ready);
      else if (wait_ns > 0)
        cv_.wait_for(lk, std::chrono::nanoseconds(std::min<int64_t>(wait_ns, 50'000'000)), ready);
      subs.swap(pending_);
      cancels.swap(cancels_);
      snap_.pending = 0;
      snap_.waiting += static_cast<uint32_t>(subs.size());  // counted as queued until published
      stop = stop_;
    }
    intake(subs);
    for (uint64_t id : cancels) end(id, false);
    cancels.clear();
    if (stop) break;
    const int64_t now = now_ns();
    std::vector<uint64_t> expired;
    for (const auto& [id, l] : live_)
      if (l.deadline_ns && now >= l.deadline_ns) expired.push_back(id);
    for (uint64_t id : expired) end(id, true);
    wait_ns = 0;
    if (!e.idle()) {
      touched_.clear();
      const int64_t t0 = now_ns();
      engine::StepStats st;
      try {
        st = e.step();
      } catch (const std::exception& ex) {
        // A failed forward pass leaves the batch unusable: abort what is running, keep serving.
        logger()->error("variant {}: step failed: {}; aborting the running requests", name_,
                        ex.what());
        std::vector<uint64_t> ids;
        for (const auto& [id, l] : live_)
          if (e.request(id).running) ids.push_back(id);
        for (uint64_t id : ids) end(id, false);
      }
      if (observer_ && st.n_seqs) observer_->on_step(name_, st, now_ns() - t0);
      if (st.n_seqs == 0) wait_ns = std::max<int64_t>(st.wait_ns, 1'000'000);
      for (uint64_t id : stops_)
        if (live_.count(id)) end(id, false, true);
      stops_.clear();
      for (uint64_t id : touched_)
        if (live_.count(id) && e.request(id).finish != engine::FinishReason::none) end(id, false);
    }
    publish_snapshot();
    report_finished();
  }
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
