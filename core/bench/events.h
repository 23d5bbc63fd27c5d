// The event log of one replay: what happened to every request and every engine step, on the
// host clock (sy::now_ns). Metrics are pure functions of this log, so they are tested on
// hand-written logs without a model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sy::bench {

struct RequestRecord {
  bool simple = false;  // workload class
  uint32_t path = 0;    // the engine's path tag when it finished (0 = full, 1 = light)
  uint32_t prompt_len = 0;
  uint32_t max_new_tokens = 0;
  int64_t arrival_ns = 0;
  int64_t first_scheduled_ns = 0;  // 0: never scheduled
  std::vector<int64_t> token_ns;   // one per output token
  int64_t finish_ns = 0;
  bool ok = false;    // finished normally (stop or length)
  std::string error;  // why not, when !ok
  uint32_t preemptions = 0;
  double cost_ns = 0;  // engine busy time attributed to it (each step split by tokens)
};

struct StepRecord {
  int64_t t_ns = 0;    // when the step began
  int64_t dur_ns = 0;  // plan + forward + sampling
  uint32_t n_seqs = 0, n_tokens = 0, n_prefill_tokens = 0, n_decode = 0;
  uint32_t n_waiting = 0, n_running = 0;  // queue depth as the step began
  uint32_t kv_used_blocks = 0;            // after the step
  int64_t predicted_ns = 0;  // the cost model's estimate of the forward pass (0: none ran)
  int64_t exec_ns = 0;       // the forward pass as measured
};

// Memory the engine held for requests, sampled after every step.
struct MemoryPeaks {
  uint64_t kv_block_bytes = 0;  // K and V of one block over the global attention layers
  // The sliding-window layers' own pool (0: none; their blocks are in kv_block_bytes).
  uint64_t kv_window_block_bytes = 0;
  uint32_t peak_kv_window_blocks = 0;
  uint64_t state_bytes_per_seq = 0;  // recurrent state of one running sequence
  uint64_t kv_allocated_bytes = 0;   // the whole cache
  uint32_t peak_kv_blocks = 0;
  uint32_t state_snapshot_slots = 0;  // hybrid prefix caching: snapshot budget (state slots)
  uint32_t peak_snapshots = 0;        // most snapshots held at once
  uint64_t peak_bytes = 0;  // KV in use + recurrent state of running requests and snapshots
  std::map<uint32_t, uint64_t> peak_by_path;  // the same, counting only requests on each path
};

struct RunLog {
  int64_t start_ns = 0;  // arrival offsets count from here
  int64_t end_ns = 0;    // when the replay loop stopped
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  MemoryPeaks memory;
  std::map<std::string, double> counters;  // the engine's counter deltas over the run
  bool timed_out = false;
};

}  // namespace sy::bench
