// A model-free host for scheduler tests: it owns requests and KV blocks, hands a scheduler the
// same view the engine would, checks the plan as strictly as the engine does, and applies it
// (every decode emits one token). Lets long adversarial traces run in milliseconds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host/plan_check.h"
#include "host/scheduler.h"

namespace sy::test {

struct SimRequest {
  uint64_t id;
  uint32_t prompt, max_new;
  int32_t priority = 0;
  int64_t arrival_ns;
  uint32_t prefix_hit = 0;  // shown while waiting
  // progress
  bool running = false, done = false;
  uint32_t computed = 0, generated = 0, blocks = 0, preemptions = 0;
  int64_t admitted_ns = -1, finished_ns = -1;
};

class SimHost {
 public:
  uint32_t block_size = 16, total_blocks = 64, max_batch_tokens = 256, max_seqs = 16;
  int64_t now_ns = 0, step_ns = 10'000'000;  // each step takes 10 ms of simulated time
  // Cost model the view carries: 1 ms + 0.1 ms per prefill token + 0.2 ms per decode.
  static int64_t cost(void*, const sy_step_shape* s) {
    return 1'000'000 + 100'000LL * s->n_prefill_tokens + 200'000LL * s->n_decode_seqs;
  }

  void add(SimRequest r) { reqs_[r.id] = r; }
  const SimRequest& get(uint64_t id) const { return reqs_.at(id); }
  const std::map<uint64_t, SimRequest>& all() const { return reqs_; }
  uint32_t used_blocks() const {
    uint32_t n = 0;
    for (const auto& [id, r] : reqs_) n += r.blocks;
    return n;
  }
  uint32_t max_tokens_in_a_step = 0;

  // One step; returns false when everything that has arrived is done and nothing is pending.
  bool step(Scheduler& s) {
    std::vector<sy_sched_request> wv, rv;
    for (auto& [id, r] : reqs_) {
      if (r.done || r.arrival_ns > now_ns) continue;
      sy_sched_request v{};
      v.struct_size = sizeof v;
      v.id = r.id;
      v.state = r.running ? SY_REQ_RUNNING : SY_REQ_WAITING;
      v.arrival_ns = r.arrival_ns;
      v.priority = r.priority;
      v.prompt_len = r.prompt;
      v.max_new_tokens = r.max_new;
      v.num_computed = r.computed;
      v.num_generated = r.generated;
      v.num_preemptions = r.preemptions;
      v.prefix_hit_len = r.running ? 0 : r.prefix_hit;
      (r.running ? rv : wv).push_back(v);
    }
    std::sort(wv.begin(), wv.end(), [](auto& a, auto& b) { return a.arrival_ns < b.arrival_ns; });
    bool pending = false;
    for (auto& [id, r] : reqs_) pending |= !r.done;
    if (!pending) return false;
    sy_sched_view v{};
    v.struct_size = sizeof v;
    v.request_size = sizeof(sy_sched_request);
    v.now_ns = now_ns;
    v.waiting = wv.data();
    v.n_waiting = uint32_t(wv.size());
    v.running = rv.data();
    v.n_running = uint32_t(rv.size());
    v.kv_block_size = block_size;
    v.kv_total_blocks = total_blocks;
    v.kv_free_blocks = total_blocks - used_blocks();
    v.max_context = 4096;
    v.max_batch_tokens = max_batch_tokens;
    v.max_seqs = max_seqs;
    v.estimate_step_ns = &SimHost::cost;
    std::vector<sy_sched_entry> entries(wv.size() + rv.size() + 1);
    std::vector<uint64_t> preempt(rv.size() + 1);
    sy_sched_plan p{};
    p.struct_size = sizeof p;
    p.entries = entries.data();
    p.entries_capacity = uint32_t(entries.size());
    p.preempt = preempt.data();
    p.preempt_capacity = uint32_t(preempt.size());
    EXPECT_NO_THROW(s.plan(v, p));
    // What the view alone can judge, as the engine judges it (ids, counts, budget, max_seqs).
    try {
      check_plan(v, p);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "invalid plan: " << e.what();
      return false;
    }
    for (uint32_t i = 0; i < p.n_preempt; ++i) {
      SimRequest& r = reqs_.at(preempt[i]);
      r.running = false;
      r.computed = r.blocks = 0;
      ++r.preemptions;
    }
    uint32_t tokens = 0;
    for (uint32_t i = 0; i < p.n_entries; ++i) {
      SimRequest& r = reqs_.at(entries[i].id);
      EXPECT_FALSE(r.done);
      if (!r.running) {
        r.running = true;
        r.computed = r.prefix_hit;
        if (r.admitted_ns < 0) r.admitted_ns = now_ns;
      }
      tokens += entries[i].num_tokens;
      r.computed += entries[i].num_tokens;
      r.blocks = (r.computed + block_size - 1) / block_size;
      if (r.computed == r.prompt + r.generated && ++r.generated == r.max_new) {
        r.done = true;
        r.running = false;
        r.blocks = 0;
        r.finished_ns = now_ns;
      }
    }
    EXPECT_LE(used_blocks(), total_blocks) << "KV blocks over-committed";
    max_tokens_in_a_step = std::max(max_tokens_in_a_step, tokens);
    now_ns += (p.n_entries || p.n_preempt) ? step_ns : std::max<int64_t>(1, std::min<int64_t>(p.wait_ns, step_ns));
    return true;
  }

 private:
  std::map<uint64_t, SimRequest> reqs_;
};

}  // namespace sy::test
