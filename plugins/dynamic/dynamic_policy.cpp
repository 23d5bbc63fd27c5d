#include "dynamic_policy.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>

namespace sy::dynamic {
namespace {

const sy_sched_request& at(const sy_sched_view& v, const sy_sched_request* a, uint32_t i) {
  return *SY_SCHED_REQUEST_AT(&v, a, i);
}
uint32_t blocks_for(const sy_sched_view& v, uint64_t tokens) {
  return static_cast<uint32_t>((tokens + v.kv_block_size - 1) / v.kv_block_size);
}
// The view's recurrent-state budget (1.0 views have none; models without SSM layers show 0).
bool has_state_budget(const sy_sched_view& v) {
  return v.struct_size >= offsetof(sy_sched_view, state_slots_free) + sizeof(uint32_t) &&
         v.state_slots_total > 0;
}
uint32_t pending_prefix(const sy_sched_view& v, const sy_sched_request& r) {
  return v.request_size >= offsetof(sy_sched_request, prefix_pending_len) + sizeof(uint32_t)
             ? r.prefix_pending_len
             : 0;
}
bool has_cost_model(const sy_sched_view& v) {
  return v.struct_size >= offsetof(sy_sched_view, cost_ctx) + sizeof(void*) && v.estimate_step_ns;
}
int64_t estimate(const sy_sched_view& v, uint32_t prefill, uint32_t decode, uint64_t ctx) {
  sy_step_shape s{sizeof(sy_step_shape), prefill, decode, 0, ctx};
  return v.estimate_step_ns(v.cost_ctx, &s);
}

}  // namespace

// With decodes in flight the budget is the largest prefill that keeps the estimated step under
// the ITL target (Sarathi-Serve's stall-free batching); with none, throughput wins: full budget.
uint32_t Policy::choose_budget(const sy_sched_view& v, uint32_t n_decode, uint64_t ctx) const {
  const uint32_t full = v.max_batch_tokens;
  if (!opt_.adaptive || n_decode == 0 || !has_cost_model(v)) return full;
  const int64_t target = static_cast<int64_t>(opt_.target_step_ms * 1e6);
  uint32_t lo = std::min(full, std::max(opt_.min_budget, n_decode + 1)), hi = full;
  if (estimate(v, lo - n_decode, n_decode, ctx) > target) return lo;
  while (lo < hi) {  // largest budget whose estimate meets the target
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (estimate(v, mid - n_decode, n_decode, ctx + (mid - n_decode)) <= target)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// The batch size past which adding a sequence no longer amortises the step's fixed cost
// (weights streamed once per step): smallest b with fixed/b <= per-sequence cost.
uint32_t Policy::target_batch(const sy_sched_view& v) const {
  const uint32_t cap = opt_.max_num_seqs ? std::min(opt_.max_num_seqs, v.max_seqs) : v.max_seqs;
  if (!has_cost_model(v)) return cap;
  const double fixed = static_cast<double>(estimate(v, 0, 0, 0));
  const double per_seq = std::max(1.0, static_cast<double>(estimate(v, 0, 1, 0)) - fixed);
  return std::clamp<uint32_t>(static_cast<uint32_t>(std::ceil(fixed / per_seq)), 1, cap);
}

void Policy::observe_arrivals(const sy_sched_view& v) {
  for (uint32_t i = 0; i < v.n_waiting; ++i) {
    const int64_t a = at(v, v.waiting, i).arrival_ns;
    if (a <= last_arrival_ns_) continue;
    if (last_arrival_ns_ > 0) {
      const double gap = static_cast<double>(a - last_arrival_ns_);
      gap_ewma_ns_ = gap_ewma_ns_ > 0 ? 0.8 * gap_ewma_ns_ + 0.2 * gap : gap;
    }
    last_arrival_ns_ = a;
  }
}

Decision Policy::plan(const sy_sched_view& v, sy_sched_plan& p) {
  Decision d;
  p.n_entries = p.n_preempt = 0;
  p.wait_ns = 0;
  observe_arrivals(v);
  const uint32_t max_seqs =
      opt_.max_num_seqs ? std::min(opt_.max_num_seqs, v.max_seqs) : v.max_seqs;

  // Running requests: priority, then arrival (preemption victims come from the back).
  std::vector<const sy_sched_request*> running;
  for (uint32_t i = 0; i < v.n_running; ++i) running.push_back(&at(v, v.running, i));
  auto by_priority_then_arrival = [&](const sy_sched_request* a, const sy_sched_request* b) {
    if (opt_.priority && a->priority != b->priority) return a->priority > b->priority;
    if (a->arrival_ns != b->arrival_ns) return a->arrival_ns < b->arrival_ns;
    return a->id < b->id;
  };
  std::stable_sort(running.begin(), running.end(), by_priority_then_arrival);

  uint32_t n_decode = 0;
  uint64_t ctx = 0;
  for (const auto* r : running) {
    n_decode += r->prompt_len + r->num_generated - r->num_computed == 1;
    ctx += r->num_computed;
  }
  uint32_t budget = d.budget = choose_budget(v, n_decode, ctx);
  int64_t free_blocks = v.kv_free_blocks;
  std::vector<bool> gone(running.size(), false);  // preempted this step

  for (size_t i = 0; i < running.size() && budget > 0; ++i) {
    if (gone[i]) continue;
    const sy_sched_request& r = *running[i];
    const uint32_t remaining = r.prompt_len + r.num_generated - r.num_computed;
    if (remaining == 0) continue;
    // Without chunking a prompt waits for a whole budget, unless it could never fit in one.
    if (!opt_.chunked_prefill && remaining > budget && remaining <= d.budget) {
      ++d.n_skipped;
      continue;
    }
    const uint32_t n = std::min(remaining, budget);
    const int64_t need = int64_t(blocks_for(v, r.num_computed + n)) - blocks_for(v, r.num_computed);
    // Free blocks by recomputing the lowest-ranked unprotected request behind this one.
    for (size_t j = running.size(); need > free_blocks && opt_.preemption && j-- > i + 1;) {
      if (gone[j] || running[j]->num_preemptions >= opt_.max_preemptions) continue;
      gone[j] = true;
      p.preempt[p.n_preempt++] = running[j]->id;
      free_blocks += blocks_for(v, running[j]->num_computed);
      ++d.n_preempted;
    }
    if (need > free_blocks) {
      ++d.n_skipped;
      continue;
    }
    free_blocks -= need;
    budget -= n;
    p.entries[p.n_entries++] = sy_sched_entry{r.id, n, 0};
  }

  // Every running request is stuck on memory and none may be preempted by rank: recompute the
  // newest anyway rather than deadlock (the only way past the max_preemptions protection).
  if (p.n_entries == 0 && p.n_preempt == 0 && !running.empty() && opt_.preemption &&
      d.n_skipped > 0) {
    p.preempt[p.n_preempt++] = running.back()->id;
    ++d.n_preempted;
    p.wait_ns = 0;
    return d;
  }

  // Waiting requests, unless this step had to preempt (then memory is the constraint).
  std::vector<const sy_sched_request*> waiting;
  for (uint32_t i = 0; i < v.n_waiting; ++i) waiting.push_back(&at(v, v.waiting, i));
  const int64_t aging_ns = static_cast<int64_t>(opt_.aging_ms * 1e6);
  std::stable_sort(waiting.begin(), waiting.end(), [&](const auto* a, const auto* b) {
    if (opt_.priority && a->priority != b->priority) return a->priority > b->priority;
    const bool aged_a = v.now_ns - a->arrival_ns >= aging_ns,
               aged_b = v.now_ns - b->arrival_ns >= aging_ns;
    if (aged_a != aged_b) return aged_a;  // aged requests first: no starvation under LPM
    if (opt_.prefix_ordering && !aged_a && a->prefix_hit_len != b->prefix_hit_len)
      return a->prefix_hit_len > b->prefix_hit_len;
    return a->arrival_ns != b->arrival_ns ? a->arrival_ns < b->arrival_ns : a->id < b->id;
  });
  // Admission leaves a watermark of blocks for the running requests to grow into: at least
  // the configured share, and one block per sequence so every decode can cross its next block
  // boundary without a preemption (a long queue would otherwise fill the cache with prompts
  // and thrash). Requests with recurrent state also need a free state slot each.
  const int64_t watermark = static_cast<int64_t>(std::ceil(opt_.watermark * v.kv_total_blocks));
  int64_t state_slots = has_state_budget(v) ? int64_t(v.state_slots_free) : INT64_MAX;
  size_t seqs = running.size() - d.n_preempted;
  for (const auto* w : waiting) {
    if (d.n_preempted > 0 || budget == 0 || seqs >= max_seqs || p.n_entries >= p.entries_capacity)
      break;
    if (state_slots <= 0) break;
    // Its prefix is being prefilled by a running request: wait for it to be cached instead of
    // computing it twice (SGLang defers such duplicates too); others may go first meanwhile.
    if (opt_.prefix_ordering && pending_prefix(v, *w) >= opt_.defer_pending_tokens) {
      ++d.n_deferred;
      continue;
    }
    const uint32_t start = w->prefix_hit_len;
    const uint32_t remaining = w->prompt_len + w->num_generated - start;
    // FIFO within the order: no overtaking. A prompt longer than any budget is split anyway.
    if (!opt_.chunked_prefill && remaining > budget && remaining <= d.budget) break;
    const uint32_t n = std::min(remaining, budget);
    // Without preemption nothing can be reclaimed later: reserve the whole request up front.
    const int64_t need = opt_.preemption
                             ? blocks_for(v, start + n)
                             : blocks_for(v, uint64_t(w->prompt_len) + w->max_new_tokens);
    const int64_t reserve =
        opt_.preemption ? std::max<int64_t>(watermark, int64_t(seqs) + 1) : watermark;
    if (need + reserve > free_blocks) {
      ++d.n_skipped;
      break;
    }
    free_blocks -= need;
    budget -= n;
    ++seqs;
    --state_slots;
    ++d.n_admitted;
    p.entries[p.n_entries++] = sy_sched_entry{w->id, n, 0};
  }

  // An idle engine may hold a small queue briefly so a decode batch can form (adaptive window).
  d.target_batch = target_batch(v);
  if (opt_.adaptive && running.empty() && p.n_entries > 0 && p.n_entries < d.target_batch &&
      gap_ewma_ns_ > 0) {
    const int64_t oldest = at(v, v.waiting, 0).arrival_ns;
    const int64_t max_wait = static_cast<int64_t>(opt_.max_wait_ms * 1e6);
    const int64_t waited = v.now_ns - oldest;
    const int64_t expected = static_cast<int64_t>(gap_ewma_ns_);  // time to the next arrival
    if (waited < max_wait && expected < max_wait - waited) {
      p.n_entries = 0;
      d.n_admitted = 0;
      p.wait_ns = d.wait_ns = std::min(expected, max_wait - waited);
      return d;
    }
  }
  if (p.n_entries == 0 && p.n_preempt == 0)
    p.wait_ns = d.wait_ns = v.n_waiting ? 1'000'000 : INT64_MAX;
  return d;
}

}  // namespace sy::dynamic
