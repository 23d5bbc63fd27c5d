// Builds scheduler views and plans by hand, so scheduler plugins are tested on plans alone.
#pragma once

#include <string>
#include <vector>

#include "host/plugin_host.h"
#include "host/scheduler.h"

namespace sy::test {

struct SchedHarness {
  std::vector<sy_sched_request> waiting, running;
  uint32_t block_size = 16, total_blocks = 64, free_blocks = 64;
  uint32_t max_batch_tokens = 512, max_seqs = 16, max_context = 1024;
  uint32_t state_slots_total = 0, state_slots_free = 0;  // models with recurrent layers
  int64_t now_ns = 1'000'000'000;
  std::vector<sy_sched_entry> entries = std::vector<sy_sched_entry>(64);
  std::vector<uint64_t> preempt = std::vector<uint64_t>(64);
  sy_sched_plan plan{};

  static sy_sched_request req(uint64_t id, uint32_t prompt, uint32_t max_new, int64_t arrival_ns) {
    sy_sched_request r{};
    r.struct_size = sizeof r;
    r.id = id;
    r.prompt_len = prompt;
    r.max_new_tokens = max_new;
    r.arrival_ns = arrival_ns;
    return r;
  }
  sy_status run(Scheduler& s, std::string* error = nullptr) {
    sy_sched_view v{};
    v.struct_size = sizeof v;
    v.request_size = sizeof(sy_sched_request);
    v.now_ns = now_ns;
    v.waiting = waiting.data();
    v.n_waiting = static_cast<uint32_t>(waiting.size());
    v.running = running.data();
    v.n_running = static_cast<uint32_t>(running.size());
    v.kv_block_size = block_size;
    v.kv_total_blocks = total_blocks;
    v.kv_free_blocks = free_blocks;
    v.max_context = max_context;
    v.max_batch_tokens = max_batch_tokens;
    v.max_seqs = max_seqs;
    v.state_slots_total = state_slots_total;
    v.state_slots_free = state_slots_free;
    plan = sy_sched_plan{};
    plan.struct_size = sizeof plan;
    plan.entries = entries.data();
    plan.entries_capacity = static_cast<uint32_t>(entries.size());
    plan.preempt = preempt.data();
    plan.preempt_capacity = static_cast<uint32_t>(preempt.size());
    try {
      s.plan(v, plan);
    } catch (const Error& e) {
      if (error) *error = e.what();
      return e.status();
    }
    return SY_OK;
  }
  // (id, num_tokens) pairs of the last plan.
  std::vector<std::pair<uint64_t, uint32_t>> planned() const {
    std::vector<std::pair<uint64_t, uint32_t>> out;
    for (uint32_t i = 0; i < plan.n_entries; ++i)
      out.emplace_back(entries[i].id, entries[i].num_tokens);
    return out;
  }
  // Moves planned waiting requests to running and applies the tokens, as the engine would.
  void apply() {
    for (uint32_t i = 0; i < plan.n_entries; ++i) {
      for (size_t w = 0; w < waiting.size(); ++w)
        if (waiting[w].id == entries[i].id) {
          waiting[w].state = SY_REQ_RUNNING;
          running.push_back(waiting[w]);
          waiting.erase(waiting.begin() + w);
          break;
        }
      for (auto& r : running)
        if (r.id == entries[i].id) {
          r.num_computed += entries[i].num_tokens;
          if (r.num_computed == r.prompt_len + r.num_generated) ++r.num_generated;  // sampled one
        }
    }
  }
};

}  // namespace sy::test
