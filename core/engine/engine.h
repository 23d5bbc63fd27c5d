// The engine loop: each step asks the scheduler plugin for a plan, checks it, applies it
// (preempting, admitting, allocating KV blocks), executes it on the model, samples, and retires
// finished requests. With `overlap`, step N+1 is planned and prepared while step N computes on a
// worker thread; the plan sees step N's results optimistically (every decode one token longer)
// and loses only the entries of requests that step N finished by an end-of-sequence token.
#pragma once

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/cost_model.h"
#include "engine/request.h"
#include "engine/step_worker.h"
#include "host/host_api.h"
#include "host/scheduler.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/state_snapshots.h"

namespace sy::engine {

// Hybrid prefix caching (prefix_caching on a model with recurrent layers): which KV-block
// boundaries of a prompt get a snapshot of the recurrent state, as vLLM's mamba_cache_mode.
enum class StateCache {
  none,  // no snapshots: prefix caching stays off for models with recurrent layers
  all,   // every block boundary of the prompt
  last,  // only the last boundary before the prompt's final token (multi-turn continuations)
};

struct EngineLimits {
  uint32_t max_seqs = 16;
  uint32_t max_batch_tokens = 2048;
  uint32_t max_context = 0;  // 0: model's
  std::vector<int32_t> eos;  // the ids that end generation (eos, eot, eom); empty: none
  bool prefix_caching = false;  // share full KV blocks of equal prefixes across requests
  bool overlap = false;         // plan and prepare step N+1 while step N computes
  StateCache state_cache = StateCache::all;
  uint32_t state_cache_slots = 0;  // snapshot slots beyond the max_seqs running ones; 0: 4 each
  // The snapshots' budget in bytes (wins over state_cache_slots): as many whole snapshots as
  // fit. A Qwen3.5-35B-A3B state is ~63 MiB, the KV of ~3,200 tokens; 0: by slots.
  uint64_t state_cache_bytes = 0;
};

struct StepStats {
  uint32_t n_seqs = 0;
  uint32_t n_tokens = 0;
  uint32_t n_prefill_tokens = 0;
  uint32_t n_decode = 0;
  int64_t wait_ns = 0;  // when nothing ran: how long the scheduler asked to wait
  bool plan_rejected = false;
  int64_t predicted_ns = 0;  // the cost model's estimate of the forward pass, made at launch
  int64_t exec_ns = 0;       // the forward pass as measured
};

class Engine {
 public:
  Engine(model::Model& model, model::KvCache& cache, Scheduler& scheduler, EngineLimits limits);
  ~Engine();  // waits for a step still computing

  // Queues a request; throws std::invalid_argument when it can never run (empty prompt, prompt +
  // max_new_tokens over the context).
  uint64_t submit(RequestSpec spec, int64_t arrival_ns = 0);
  // Runs one step to its end and returns what it computed; with overlap the next step may be
  // computing when it returns (its requests show as running).
  StepStats step();
  // Ends a request early: a waiting one leaves the queue, a running one finishes as aborted and
  // frees its KV blocks and state. False when the id is unknown or already finished.
  bool cancel(uint64_t id);
  // Drops a finished request's record; a long-running server would otherwise keep every one.
  void forget(uint64_t id);
  // Steps until no request is left, sleeping through the scheduler's wait windows (EngineLoop).
  void run_until_idle();

  bool idle() const { return waiting_.empty() && running_.empty() && !inflight_; }
  size_t n_waiting() const { return waiting_.size(); }
  size_t n_running() const { return running_.size(); }
  const Request& request(uint64_t id) const { return *all_.at(id); }
  const std::map<uint64_t, std::unique_ptr<Request>>& requests() const { return all_; }
  uint64_t invalid_plans() const { return invalid_plans_; }
  const CostModel& cost_model() const { return cost_; }
  const EngineLimits& limits() const { return lim_; }
  uint32_t peak_blocks_used() const { return peak_blocks_; }
  // Bytes of KV blocks and recurrent state held by the running requests of each triage path, at
  // their peak over the engine's life.
  const std::map<uint32_t, uint64_t>& peak_memory_by_path() const { return peak_path_bytes_; }
  // Recurrent state of the running requests (one slot each).
  uint64_t state_bytes_in_use() const {
    return model_.info().state_bytes_per_seq
               ? (lim_.max_seqs - free_state_slots_.size()) * model_.info().state_bytes_per_seq
               : 0;
  }
  // Recurrent-state snapshots held for hybrid prefix caching, and their budget (0 without).
  uint64_t snapshot_bytes_in_use() const {
    return snapshots_ ? uint64_t(snapshots_->held()) * model_.info().state_bytes_per_seq : 0;
  }
  uint32_t snapshot_slots() const { return snapshots_ ? snapshots_->capacity() : 0; }
  uint32_t snapshots_held() const { return snapshots_ ? snapshots_->held() : 0; }
  const model::StateSnapshots* snapshots() const { return snapshots_.get(); }
  // This engine's counters (also summed into the process-wide sy::host_counters()): what it,
  // its scheduler and its model count while it works.
  const Counters& counters() const { return counters_; }
  std::function<void(const Request&, int32_t token)> on_token;  // called as tokens are sampled
  // Tags each accepted request with its triage path (spec.path, spec.n_expert_used) before it
  // queues, given its id; unset, every request takes the full path.
  std::function<void(RequestSpec&, uint64_t id)> triage;

 private:
  // One forward pass: who takes part and, once launched, the inputs it owns (token chunks and
  // block-table copies, so the host may grow block tables while it computes).
  struct Batch {
    struct Member {
      uint64_t id;
      uint32_t pos0, n_tokens;
    };
    struct Snapshot {  // being written by this pass
      size_t member;
      int32_t slot;
    };
    std::vector<Member> members;
    bool plan_rejected = false;
    std::vector<std::vector<int32_t>> tokens, tables, window_tables;
    std::vector<std::vector<model::StateSnapshot>> snapshot_points;
    std::vector<Snapshot> snapshots;
    std::vector<int32_t> restores;  // snapshot slots this pass restores from (pinned)
    std::vector<model::SeqInput> inputs;
    sy_step_shape shape{};
    StepStats stats;
    std::vector<float> logits;
    int64_t exec_ns = 0;
    std::exception_ptr error;
  };
  // A scheduler decision copied out of the plan buffers, and the batch applying it builds.
  struct PlannedStep {
    std::vector<sy_sched_entry> entries;
    std::vector<uint64_t> preempt;
    int64_t wait_ns = 0;
    Batch batch;  // plan_rejected: the host's fallback replaced the scheduler's plan
  };

  PlannedStep plan_step();
  std::unordered_set<model::BlockHash> prefilling_blocks();
  bool can_apply_now(const PlannedStep& p) const;
  void apply(PlannedStep& p);
  void launch(Batch& b);
  void execute(Batch& b) noexcept;
  void start_on_worker(Batch&& b);  // becomes inflight_
  StepStats commit(Batch& b);
  void score_prompt(Request& r, const model::SeqInput& in, const float* rows);
  bool finishing(const Request& r) const;
  Request* live(uint64_t id) const;
  // Throws sy::Error naming the plan's first violation.
  void validate(const sy_sched_view& view, const sy_sched_plan& plan) const;
  void fallback_plan(sy_sched_plan& plan) const;
  void preempt(Request& r);
  void release_state(Request& r);
  void release_blocks(Request& r);
  void update_hashes(Request& r) const;
  uint32_t computed_if_admitted(const Request& r) const;
  void admit(Request& r, int64_t now);
  void publish_blocks(Request& r);
  void finish(Request& r, FinishReason why, int64_t now);
  void count(const char* name, double delta) { host_counter_add_to(&counters_, name, delta); }
  // Hybrid prefix caching (model/state_snapshots.h).
  uint32_t snapshot_hit(const Request& r, uint32_t kv_hit_blocks) const;
  void plan_snapshots(Request& r, size_t member, Batch& b);
  // committed: per member, whether its KV blocks were published (null: the pass failed).
  void settle_snapshots(Batch& b, const std::vector<bool>* committed);
  void unpin_restore(Request& r);

  model::Model& model_;
  Counters counters_;
  std::vector<int32_t> free_state_slots_;  // recurrent-state slots (models with SSM layers)
  model::KvCache& cache_;
  Scheduler& sched_;
  EngineLimits lim_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Request>> all_;
  std::vector<Request*> waiting_;  // arrival order (preempted ones go back to the front)
  std::vector<Request*> running_;  // admission order
  uint64_t invalid_plans_ = 0;
  CostModel cost_;
  uint32_t peak_blocks_ = 0;
  std::map<uint32_t, uint64_t> peak_path_bytes_;
  std::unique_ptr<model::StateSnapshots> snapshots_;  // hybrid prefix caching, else null
  std::unique_ptr<Batch> inflight_;                   // overlap: the step computing on the worker
  std::unique_ptr<StepWorker> worker_;
};

}  // namespace sy::engine
