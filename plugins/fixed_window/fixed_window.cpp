// The original scheduler: a fixed batch cap, a fixed wait window and static batches. It waits
// until max_batch requests are queued or the oldest has waited wait_window_ms, admits up to
// max_batch whose whole prompt + max_new_tokens fit in the free KV blocks, and runs that batch
// until every member finishes before it admits anyone else. Predictable, simple, never preempts.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "switchyard/sdk/scheduler.h"

namespace {

class FixedWindow {
 public:
  static constexpr sy::plugin::Info kInfo{
      "fixed_window", "0.1.0", "original: fixed batch cap, fixed wait window, static batches"};
  struct Options {
    uint32_t max_batch = 8;
    double wait_window_ms = 10;
  };
  static void declare(sy::plugin::Params<Options>& p) {
    p.add("max_batch", &Options::max_batch, 1, 65536);
    p.add("wait_window_ms", &Options::wait_window_ms, 0.0, 1e6);
  }
  explicit FixedWindow(const Options& o)
      : max_batch_(o.max_batch), window_ns_(static_cast<int64_t>(o.wait_window_ms * 1e6)) {}

  void plan(const sy_sched_view& v, sy_sched_plan& p) {
    // Drop finished members: whatever is no longer running.
    std::vector<uint64_t> alive;
    for (uint64_t id : batch_)
      for (uint32_t i = 0; i < v.n_running; ++i)
        if (SY_SCHED_REQUEST_AT(&v, v.running, i)->id == id) alive.push_back(id);
    batch_.swap(alive);

    uint32_t budget = v.max_batch_tokens;
    auto add = [&](const sy_sched_request* r) {
      const uint32_t n = std::min(remaining(r), budget);
      if (n == 0 || p.n_entries >= p.entries_capacity) return;
      p.entries[p.n_entries++] = sy_sched_entry{r->id, n, 0};
      budget -= n;
    };
    if (!batch_.empty()) {
      for (uint32_t i = 0; i < v.n_running; ++i) add(SY_SCHED_REQUEST_AT(&v, v.running, i));
      return;
    }
    if (v.n_waiting == 0) {
      p.wait_ns = INT64_MAX;  // nothing to do until a request arrives
      return;
    }
    const int64_t waited = v.now_ns - SY_SCHED_REQUEST_AT(&v, v.waiting, 0)->arrival_ns;
    if (v.n_waiting < max_batch_ && waited < window_ns_) {
      p.wait_ns = window_ns_ - waited;
      return;
    }
    // Admit in arrival order, reserving each request's full context so it never runs out.
    uint32_t free_blocks = v.kv_free_blocks;
    const uint32_t cap = std::min(max_batch_, v.max_seqs);
    for (uint32_t i = 0; i < v.n_waiting && batch_.size() < cap; ++i) {
      const sy_sched_request* r = SY_SCHED_REQUEST_AT(&v, v.waiting, i);
      const uint32_t need =
          (r->prompt_len + r->max_new_tokens + v.kv_block_size - 1) / v.kv_block_size;
      if (need > free_blocks || budget == 0) break;  // FIFO: no overtaking
      free_blocks -= need;
      batch_.push_back(r->id);
      add(r);
    }
    if (p.n_entries == 0) p.wait_ns = window_ns_;  // head does not fit yet; retry later
  }

 private:
  static uint32_t remaining(const sy_sched_request* r) {
    return r->prompt_len + r->num_generated - r->num_computed;
  }
  uint32_t max_batch_;
  int64_t window_ns_;
  std::vector<uint64_t> batch_;  // ids of the running static batch
};

}  // namespace

SY_DEFINE_SCHEDULER_PLUGIN(FixedWindow)
