// Runs one Variant's single-threaded engine loop on its own thread. Other threads submit
// requests (blocking until the engine accepts or refuses them, so the caller can answer with
// the engine's own reason), receive tokens as they are sampled and one finish, cancel, and
// drain the runner before a hot swap retires it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/variant.h"

namespace sy::server {

struct Outcome {
  engine::FinishReason reason = engine::FinishReason::none;
  bool timed_out = false;  // aborted by the request deadline
  std::vector<int32_t> tokens;
  uint32_t prompt_tokens = 0;
  uint32_t cached_tokens = 0;  // prompt tokens the prefix cache held when it was admitted
  uint32_t num_preemptions = 0;
  uint32_t path = 0;  // the triage path it ran on (0: full)
  int64_t arrival_ns = 0, first_scheduled_ns = 0, finish_ns = 0;  // 0: never scheduled
  std::vector<int64_t> token_ns;
  std::vector<text::TokenLogprob> logprobs;  // one per token when the request asked for them
  // One per prompt token when the spec asked (the first has nothing before it: no logprob).
  std::vector<text::TokenLogprob> prompt_logprobs;
};

// Both run on the engine thread and must not block; on_finish runs exactly once per accepted
// request (also when the runner is destroyed with the request unfinished). on_token gets the
// token's logprob when the request asked for them (else null), with the first token the
// prompt's logprobs when the spec asked for them (else null), and returns true to end the
// request now (a stop string or stop token): it then finishes with reason stop.
struct Callbacks {
  std::function<bool(int32_t token, const text::TokenLogprob* logprob,
                     const std::vector<text::TokenLogprob>* prompt_logprobs)>
      on_token;
  std::function<void(const Outcome&)> on_finish;
};

// Live state, read by the metrics scrape.
struct RunnerSnapshot {
  std::string variant;
  uint32_t running = 0, waiting = 0, pending = 0;  // pending: submitted, not in the engine yet
  uint32_t kv_used = 0, kv_total = 0;
  bool draining = false;
  std::map<std::string, double> counters;  // the engine's own (engine::Engine::counters())
};

// What the runner reports as it works (the metrics); called on the engine thread.
class RunnerObserver {
 public:
  virtual ~RunnerObserver() = default;
  virtual void on_step(const std::string& variant, const engine::StepStats& st,
                       int64_t step_ns) = 0;
  virtual void on_token(const std::string& variant, const engine::Request& r) = 0;
  virtual void on_finish(const std::string& variant, const Outcome& o) = 0;
};

class EngineRunner {
 public:
  enum class Admit { ok, queue_full, draining, invalid };
  struct Ticket {
    Admit status = Admit::ok;
    uint64_t id = 0;    // the engine's request id (valid when ok)
    std::string error;  // why, when not ok
    uint32_t path = 0;  // the triage path the engine gave it (valid when ok)
  };

  // Takes the built variant and starts the engine thread. `max_queue` bounds the requests
  // submitted but not yet running. `observer` may be null and must outlive the runner.
  // `generation`: of the deployment that loaded it (reported to clients, for swap tests).
  EngineRunner(std::string name, std::unique_ptr<engine::Variant> v, uint32_t max_queue,
               RunnerObserver* observer, uint64_t generation = 0);
  // Aborts whatever is left (each gets its on_finish) and joins the engine thread.
  ~EngineRunner();
  // The same, ahead of destruction (a server stopping while handlers still hold the runner).
  void shutdown();
  EngineRunner(const EngineRunner&) = delete;
  EngineRunner& operator=(const EngineRunner&) = delete;

  // Thread-safe. deadline_ns: absolute (now_ns clock); the request is aborted past it (0: none).
  Ticket submit(engine::RequestSpec spec, Callbacks cb, int64_t arrival_ns, int64_t deadline_ns);
  // Thread-safe; a no-op for a finished or unknown id. Frees the request's KV blocks.
  void cancel(uint64_t id);
  // Refuses new submissions from now on (Admit::draining); what was accepted runs to the end.
  void start_drain();
  // True once draining and nothing is left, within `timeout_ms`.
  bool wait_drained(int64_t timeout_ms);

  RunnerSnapshot snapshot() const;
  const std::string& name() const { return name_; }
  uint64_t generation() const { return generation_; }
  const engine::Variant& variant() const { return *v_; }
  const text::Tokenizer* tokenizer() const { return v_->tokenizer.get(); }
  const engine::EngineLimits& limits() const { return v_->engine->limits(); }

 private:
  struct Submission {
    engine::RequestSpec spec;
    Callbacks cb;
    int64_t arrival_ns = 0, deadline_ns = 0;
    std::promise<Ticket> accepted;
  };
  struct Live {
    Callbacks cb;
    int64_t deadline_ns = 0;
  };
  class Source;  // the engine loop's view of the runner (engine/engine_loop.h)
  void loop();
  void intake(std::vector<std::unique_ptr<Submission>>& subs);
  void end(uint64_t id, bool timed_out, bool stopped = false);
  void publish_snapshot();

  const std::string name_;
  std::unique_ptr<engine::Variant> v_;
  const uint32_t max_queue_;
  RunnerObserver* observer_;
  const uint64_t generation_;

  mutable std::mutex mu_;
  std::condition_variable cv_;       // work arrived or stop
  std::condition_variable idle_cv_;  // a drain may have completed
  std::vector<std::unique_ptr<Submission>> pending_;
  std::vector<uint64_t> cancels_;
  bool stop_ = false;
  bool draining_ = false;
  RunnerSnapshot snap_;  // under mu_

  // Engine thread only.
  std::unordered_map<uint64_t, Live> live_;
  std::vector<uint64_t> touched_;  // got a token this step
  std::vector<uint64_t> scoring_;  // max_new_tokens 0: they end without a token
  std::vector<uint64_t> stops_;    // their callback asked to end them this step
  // Finishes are reported after the snapshot is published, so a client that has its answer
  // also sees it in the gauges.
  std::vector<std::pair<Callbacks, Outcome>> finished_;
  void report_finished();
  std::thread thread_;
  std::once_flag joined_;
};

}  // namespace sy::server
