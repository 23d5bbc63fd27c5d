#include "host/plan_check.h"

#include <map>
#include <set>
#include <string>

#include "switchyard/common/error.h"

namespace sy {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw Error(SY_ERR_INVALID_ARG, why);
}

std::string req(uint64_t id) {
  return "request " + std::to_string(id);
}

}  // namespace

void check_plan(const sy_sched_view& v, const sy_sched_plan& p) {
  if (p.n_entries > p.entries_capacity) refuse("plan has more entries than its capacity");
  if (p.n_preempt > p.preempt_capacity) refuse("plan has more preemptions than its capacity");
  std::map<uint64_t, const sy_sched_request*> running, waiting;
  for (uint32_t i = 0; i < v.n_running; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(&v, v.running, i);
    running[r->id] = r;
  }
  for (uint32_t i = 0; i < v.n_waiting; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(&v, v.waiting, i);
    waiting[r->id] = r;
  }
  std::set<uint64_t> preempted, seen;
  for (uint32_t i = 0; i < p.n_preempt; ++i) {
    const std::string where = "preempt " + std::to_string(i) + ": ";
    if (!running.count(p.preempt[i])) refuse(where + req(p.preempt[i]) + " is not running");
    if (!preempted.insert(p.preempt[i]).second) refuse(where + req(p.preempt[i]) + " listed twice");
  }
  uint64_t tokens = 0;
  uint64_t seqs = v.n_running - preempted.size();
  for (uint32_t i = 0; i < p.n_entries; ++i) {
    const sy_sched_entry& e = p.entries[i];
    const std::string where = "entry " + std::to_string(i) + ": ";
    const auto run = running.find(e.id);
    const bool is_running = run != running.end();
    const sy_sched_request* r = is_running ? run->second : nullptr;
    if (!r) {
      const auto wait = waiting.find(e.id);
      if (wait == waiting.end()) refuse(where + "unknown request id " + std::to_string(e.id));
      r = wait->second;
    }
    if (!seen.insert(e.id).second) refuse(where + req(e.id) + " scheduled twice");
    if (preempted.count(e.id)) refuse(where + req(e.id) + " is both preempted and scheduled");
    // A waiting request starts from its cached prefix once admitted.
    const uint32_t computed = is_running ? r->num_computed : r->prefix_hit_len;
    const uint32_t remaining = r->prompt_len + r->num_generated - computed;
    if (e.num_tokens == 0 || e.num_tokens > remaining)
      refuse(where + req(e.id) + " asks for " + std::to_string(e.num_tokens) + " tokens, it has " +
             std::to_string(remaining) + " to compute");
    tokens += e.num_tokens;
    if (!is_running) ++seqs;
  }
  if (tokens > v.max_batch_tokens)
    refuse("plan carries " + std::to_string(tokens) + " tokens, over the budget of " +
           std::to_string(v.max_batch_tokens));
  if (seqs > v.max_seqs)
    refuse("plan runs " + std::to_string(seqs) + " sequences, over max_seqs " +
           std::to_string(v.max_seqs));
}

}  // namespace sy
