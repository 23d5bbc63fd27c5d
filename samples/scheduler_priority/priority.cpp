// Priority first: a Switchyard scheduler plugin in C++ on the plugin SDK (sdk/switchyard/sdk).
// The plugin is its policy class alone; SY_DEFINE_SCHEDULER_PLUGIN writes the C entry, the
// version handshake, create with typed options (unknown keys refused), last_error per handle
// and the exception boundary.
//
// Each step, running requests continue (a prompt chunk or one decode token), so an admitted
// request is never preempted. Waiting requests are then admitted highest priority first, earlier
// arrival first within a priority, while their whole context fits in the KV blocks running
// requests have not claimed, up to max_batch sequences.
//
// Parameters: max_batch (1..65536, default 16), chunked_prefill (true: a prompt longer than the
// step's budget is split; false: it waits for a step it fits in, unless it never would).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/sdk/scheduler.h"

namespace {

class PriorityFirst {
 public:
  static constexpr sy::plugin::Info kInfo{"priority", "1.0.0",
                                          "sample (C++ SDK): priority first, FCFS within, no "
                                          "preemption",
                                          SY_CAP_CHUNKED_PREFILL};
  struct Options {
    uint32_t max_batch = 16;
    bool chunked_prefill = true;
  };
  static void declare(sy::plugin::Params<Options>& p) {
    p.add("max_batch", &Options::max_batch, 1, 65536);
    p.add("chunked_prefill", &Options::chunked_prefill);
  }
  explicit PriorityFirst(const Options& o) : o_(o) {}

  void plan(const sy_sched_view& v, sy_sched_plan& p) {
    if (v.kv_block_size == 0)
      throw sy::plugin::Error(SY_ERR_INVALID_ARG, "priority: the view has kv_block_size 0");
    uint32_t budget = v.max_batch_tokens;
    int64_t free_blocks = v.kv_free_blocks;
    auto add = [&](const sy_sched_request& r, uint32_t n) {
      p.entries[p.n_entries++] = sy_sched_entry{r.id, n, 0};
      budget -= n;
    };
    for (uint32_t i = 0; i < v.n_running; ++i) {
      const sy_sched_request& r = *SY_SCHED_REQUEST_AT(&v, v.running, i);
      free_blocks -= blocks(v, context(r)) - blocks(v, r.num_computed);  // its reserved rest
      const uint32_t n = std::min(pending(r), budget);
      if (n > 0 && p.n_entries < p.entries_capacity) add(r, n);
    }
    order_.clear();
    for (uint32_t i = 0; i < v.n_waiting; ++i)
      order_.push_back(SY_SCHED_REQUEST_AT(&v, v.waiting, i));
    std::stable_sort(order_.begin(), order_.end(), [](const auto* a, const auto* b) {
      return a->priority != b->priority ? a->priority > b->priority : a->arrival_ns < b->arrival_ns;
    });
    uint32_t seqs = v.n_running;
    for (const sy_sched_request* r : order_) {
      const int64_t need = blocks(v, context(*r));
      uint32_t n = std::min(pending(*r), budget);
      if (!o_.chunked_prefill && n < pending(*r) && pending(*r) <= v.max_batch_tokens) n = 0;
      if (n == 0 || need > free_blocks || seqs >= std::min(o_.max_batch, v.max_seqs) ||
          p.n_entries >= p.entries_capacity)
        break;  // no overtaking: a lower priority never jumps a waiting higher one
      free_blocks -= need;
      ++seqs;
      add(*r, n);
    }
    if (p.n_entries == 0) p.wait_ns = v.n_waiting == 0 ? INT64_MAX : 1'000'000;
  }

 private:
  static uint32_t pending(const sy_sched_request& r) {
    return r.prompt_len + r.num_generated - r.num_computed;
  }
  static uint64_t context(const sy_sched_request& r) {
    return uint64_t(r.prompt_len) + r.max_new_tokens;
  }
  static int64_t blocks(const sy_sched_view& v, uint64_t tokens) {
    return int64_t((tokens + v.kv_block_size - 1) / v.kv_block_size);
  }
  Options o_;
  std::vector<const sy_sched_request*> order_;  // kept to reuse its allocation
};

}  // namespace

SY_DEFINE_SCHEDULER_PLUGIN(PriorityFirst)
