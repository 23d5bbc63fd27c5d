// The optimized scheduler's policy, independent of the plugin glue: iteration-level (continuous)
// batching under a per-step token budget shared by decodes and prefill chunks, a budget and a
// wait window chosen from the queue and the backend's cost model, prefix-aware ordering with
// aging, priorities (FCFS inside a priority), and bounded recompute preemption.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/abi/scheduler.h"

namespace sy::dynamic {

struct Options {
  bool chunked_prefill = true;   // split prompts across steps (off: only those over a budget)
  bool adaptive = true;          // budget and wait window from queue and cost model
  bool preemption = true;        // free blocks by recomputing the newest lowest-priority request
  bool priority = true;          // higher priority first (FCFS within a priority)
  bool prefix_ordering = true;   // longest cached prefix first among peers
  uint32_t max_preemptions = 3;  // a request preempted this often is protected
  uint32_t max_num_seqs = 0;     // 0: the host's max_seqs
  uint32_t min_budget = 64;      // adaptive budget never below this many tokens
  double target_step_ms = 60;    // adaptive: keep steps with decodes under this (ITL)
  double max_wait_ms = 4;        // adaptive: longest an idle engine waits to grow a batch
  double aging_ms = 250;         // waiting longer than this: strict arrival order
  double watermark = 0.01;       // fraction of blocks admission leaves for running decodes
  uint32_t defer_pending_tokens = 32;  // a waiting request whose prefix a running one is still
                                       // prefilling by at least this many tokens waits for it
};

// Why the step looks the way it does; exported as metrics and debug logs.
struct Decision {
  uint32_t budget = 0;
  uint32_t target_batch = 0;
  int64_t wait_ns = 0;
  uint32_t n_preempted = 0;
  uint32_t n_admitted = 0;
  uint32_t n_skipped = 0;   // runnable but did not fit (blocks or budget)
  uint32_t n_deferred = 0;  // waiting for a prefix a running request is prefilling
};

class Policy {
 public:
  explicit Policy(Options o) : opt_(o) {}
  // Fills the plan (entries, preempt, wait_ns) from the view.
  Decision plan(const sy_sched_view& view, sy_sched_plan& plan);
  const Options& options() const { return opt_; }

 private:
  uint32_t choose_budget(const sy_sched_view& v, uint32_t n_decode, uint64_t ctx_tokens) const;
  uint32_t target_batch(const sy_sched_view& v) const;
  void observe_arrivals(const sy_sched_view& v);
  Options opt_;
  int64_t last_arrival_ns_ = 0;
  double gap_ewma_ns_ = 0;  // mean inter-arrival gap
};

}  // namespace sy::dynamic
