#include "bench/driver.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "bench/counters.h"
#include "bench/rng.h"
#include "host/host_api.h"

namespace sy::bench {
namespace {

engine::RequestSpec spec_of(const WorkItem& it, bool ignore_eos) {
  engine::RequestSpec s;
  s.prompt = it.prompt;
  s.max_new_tokens = it.max_new_tokens;
  s.stop_at_eos = !ignore_eos;
  s.simple_hint = it.simple;  // path stays 0 (full): assigning paths is the triage router's job
  return s;
}

void sleep_until(int64_t t_ns) {
  const int64_t d = t_ns - now_ns();
  if (d > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d));
}

// Prompts of fresh random tokens, not the workload's: a prefix cache must start the run cold.
void warm_up(engine::Engine& eng, const std::vector<WorkItem>& items, uint32_t n, bool ignore_eos) {
  Rng rng(0x3a7e0u);
  for (uint32_t i = 0; i < n && i < items.size(); ++i) {
    engine::RequestSpec s = spec_of(items[i], ignore_eos);
    for (auto& t : s.prompt) t = static_cast<int32_t>(rng.between(kFirstToken, kEndToken - 1));
    s.max_new_tokens = std::min<uint32_t>(s.max_new_tokens, 4);
    try {
      eng.submit(std::move(s));
    } catch (const std::invalid_argument&) {
      // The timed run reports it.
    }
  }
  eng.run_until_idle();
}

// Memory held for the requests in flight: KV blocks in use, plus recurrent state of those
// running; per path, blocks shared by requests of one path count once.
void sample_memory(const engine::Variant& v, const std::vector<uint64_t>& inflight,
                   MemoryPeaks& m) {
  const auto& pool = v.cache->pool();
  const uint32_t used = pool.total() - pool.free_count();
  m.peak_kv_blocks = std::max(m.peak_kv_blocks, used);
  uint32_t running = 0;
  std::map<uint32_t, std::set<int32_t>> blocks;
  std::map<uint32_t, uint32_t> states;
  for (uint64_t id : inflight) {
    const engine::Request& r = v.engine->request(id);
    blocks[r.spec.path].insert(r.blocks.begin(), r.blocks.end());
    if (r.state_slot >= 0) {
      ++running;
      ++states[r.spec.path];
    }
  }
  m.peak_bytes = std::max(m.peak_bytes, used * m.kv_block_bytes + running * m.state_bytes_per_seq);
  for (const auto& [path, b] : blocks) {
    const uint64_t bytes = b.size() * m.kv_block_bytes + states[path] * m.state_bytes_per_seq;
    m.peak_by_path[path] = std::max(m.peak_by_path[path], bytes);
  }
}

RequestRecord record_of(const engine::Request& r, const WorkItem& it) {
  RequestRecord rec;
  rec.simple = it.simple;
  rec.path = r.spec.path;
  rec.prompt_len = static_cast<uint32_t>(r.spec.prompt.size());
  rec.max_new_tokens = r.spec.max_new_tokens;
  rec.arrival_ns = r.arrival_ns;
  rec.first_scheduled_ns = r.first_scheduled_ns;
  rec.token_ns = r.token_ns;
  rec.finish_ns = r.finish_ns;
  rec.preemptions = r.num_preemptions;
  rec.ok = r.finish == engine::FinishReason::stop || r.finish == engine::FinishReason::length ||
           r.finish == engine::FinishReason::context;
  if (!rec.ok) rec.error = std::string("finished: ") + engine::finish_reason_name(r.finish);
  return rec;
}

}  // namespace

RunLog replay(engine::Variant& v, const std::vector<WorkItem>& items, const DriverOptions& opt) {
  engine::Engine& eng = *v.engine;
  warm_up(eng, items, opt.warmup_requests, opt.ignore_eos);
  RunLog log;
  const auto& mi = v.model->info();
  log.memory.kv_block_bytes =
      v.cache->pool().total() ? v.cache->bytes() / v.cache->pool().total() : 0;
  log.memory.kv_allocated_bytes = v.cache->bytes();
  log.memory.state_bytes_per_seq = mi.state_bytes_per_seq;
  log.requests.resize(items.size());
  const auto counters_before = host_counters();

  std::vector<uint64_t> inflight;       // engine ids
  std::map<uint64_t, size_t> index_of;  // engine id -> item
  std::map<uint64_t, double> cost;      // engine id -> attributed busy ns
  std::vector<uint32_t> computed;
  size_t next = 0, finished = 0;
  const int64_t t0 = now_ns();
  const int64_t deadline = t0 + static_cast<int64_t>(opt.timeout_s * 1e9);
  log.start_ns = t0;
  auto progress = [&] {
    if (opt.on_progress) opt.on_progress(finished, items.size());
  };
  for (;;) {
    int64_t now = now_ns();
    for (; next < items.size() && t0 + items[next].arrival_ns <= now; ++next) {
      try {
        const uint64_t id =
            eng.submit(spec_of(items[next], opt.ignore_eos), t0 + items[next].arrival_ns);
        inflight.push_back(id);
        index_of[id] = next;
      } catch (const std::invalid_argument& e) {
        RequestRecord& rec = log.requests[next];
        rec.simple = items[next].simple;
        rec.prompt_len = static_cast<uint32_t>(items[next].prompt.size());
        rec.max_new_tokens = items[next].max_new_tokens;
        rec.arrival_ns = t0 + items[next].arrival_ns;
        rec.error = std::string("refused: ") + e.what();
        ++finished;
        progress();
      }
    }
    if (next == items.size() && inflight.empty()) break;
    if (now >= deadline) {
      log.timed_out = true;
      break;
    }
    if (inflight.empty()) {  // nothing to do before the next arrival
      log.steps.push_back(StepRecord{now, 0, 0, 0, 0, 0, 0, 0, 0});
      sleep_until(std::min(deadline, t0 + items[next].arrival_ns));
      continue;
    }
    computed.resize(inflight.size());
    for (size_t i = 0; i < inflight.size(); ++i)
      computed[i] = eng.request(inflight[i]).num_computed;
    const engine::StepStats st = eng.step();
    StepRecord s;
    s.t_ns = now;
    s.dur_ns = now_ns() - now;
    s.n_seqs = st.n_seqs;
    s.n_tokens = st.n_tokens;
    s.n_prefill_tokens = st.n_prefill_tokens;
    s.n_decode = st.n_decode;
    s.n_waiting = static_cast<uint32_t>(eng.n_waiting());
    s.n_running = static_cast<uint32_t>(eng.n_running());
    s.kv_used_blocks = v.cache->pool().total() - v.cache->pool().free_count();
    log.steps.push_back(s);
    if (st.n_tokens > 0) {
      // Split the step's time over its members by the tokens each computed in it.
      for (size_t i = 0; i < inflight.size(); ++i) {
        const engine::Request& r = eng.request(inflight[i]);
        const uint32_t after = r.num_computed;
        uint32_t tokens = after >= computed[i] ? after - computed[i] : after;
        // Admitted this step: prefix-cache hits became "computed" without running.
        if (computed[i] == 0 || after < computed[i])
          tokens -= std::min(tokens, r.prefix_hit_tokens);
        cost[inflight[i]] += double(s.dur_ns) * tokens / st.n_tokens;
      }
    }
    sample_memory(v, inflight, log.memory);
    for (size_t i = 0; i < inflight.size();) {
      const engine::Request& r = eng.request(inflight[i]);
      if (r.finish == engine::FinishReason::none) {
        ++i;
        continue;
      }
      RequestRecord& rec = log.requests[index_of[r.id]] = record_of(r, items[index_of[r.id]]);
      rec.cost_ns = cost[r.id];
      inflight.erase(inflight.begin() + i);
      ++finished;
      progress();
    }
    if (st.n_seqs == 0) {
      // Nothing ran: sleep through the wait window, waking for the next arrival.
      int64_t wake =
          st.wait_ns > 0 ? now + std::min<int64_t>(st.wait_ns, 50'000'000) : now + 100'000;
      if (next < items.size()) wake = std::min(wake, t0 + items[next].arrival_ns);
      sleep_until(std::min(wake, deadline));
    }
  }
  log.end_ns = now_ns();
  for (uint64_t id : inflight) {
    const engine::Request& r = eng.request(id);
    RequestRecord& rec = log.requests[index_of[id]] = record_of(r, items[index_of[id]]);
    rec.ok = false;
    rec.error = "timed out";
  }
  for (size_t i = next; i < items.size(); ++i) {
    log.requests[i].simple = items[i].simple;
    log.requests[i].error = "timed out before it arrived";
  }
  log.counters = counter_delta(counters_before, host_counters());
  return log;
}

}  // namespace sy::bench
