#include "bench/driver.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "bench/counters.h"
#include "bench/rng.h"
#include "engine/engine_loop.h"
#include "host/host_api.h"
#include "switchyard/common/error.h"

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
    } catch (const Error& e) {
      if (e.status() != SY_ERR_INVALID_ARG) throw;
      // A request the engine refuses: the timed run reports it.
    }
  }
  eng.run_until_idle();
}

// Memory held for the requests in flight: KV blocks in use, plus recurrent state of those
// running and of the prefix cache's state snapshots; per path, blocks shared by requests of one
// path count once (snapshots belong to no path).
void sample_memory(const engine::Variant& v, const std::vector<uint64_t>& inflight,
                   MemoryPeaks& m) {
  const auto& pool = v.cache->pool();
  const auto& window_pool = v.cache->window_pool();
  const uint32_t used = pool.total() - pool.free_count();
  const uint32_t used_window = window_pool.total() - window_pool.free_count();
  m.peak_kv_blocks = std::max(m.peak_kv_blocks, used);
  m.peak_kv_window_blocks = std::max(m.peak_kv_window_blocks, used_window);
  uint32_t running = 0;
  std::map<uint32_t, std::set<int32_t>> blocks, window_blocks;
  std::map<uint32_t, uint32_t> states;
  for (uint64_t id : inflight) {
    const engine::Request& r = v.engine->request(id);
    blocks[r.spec.path].insert(r.blocks.begin(), r.blocks.end());
    for (int32_t b : r.window_blocks)
      if (b >= 0) window_blocks[r.spec.path].insert(b);
    if (r.state_slot >= 0) {
      ++running;
      ++states[r.spec.path];
    }
  }
  const uint32_t snapshots = v.engine->snapshots_held();
  m.peak_snapshots = std::max(m.peak_snapshots, snapshots);
  m.peak_bytes =
      std::max(m.peak_bytes, used * m.kv_block_bytes + used_window * m.kv_window_block_bytes +
                                 (running + snapshots) * m.state_bytes_per_seq);
  for (const auto& [path, b] : blocks) {
    const uint64_t bytes = b.size() * m.kv_block_bytes +
                           window_blocks[path].size() * m.kv_window_block_bytes +
                           states[path] * m.state_bytes_per_seq;
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

// The replay as the engine loop's work source: arrivals submitted when their time comes, every
// step recorded, finished requests collected.
class Replay : public engine::WorkSource {
 public:
  Replay(engine::Variant& v, const std::vector<WorkItem>& items, const DriverOptions& opt,
         RunLog& log)
      : v_(v), items_(items), opt_(opt), log_(log) {
    t0_ = now_ns();
    deadline_ = t0_ + static_cast<int64_t>(opt.timeout_s * 1e9);
    log_.start_ns = t0_;
  }

  void intake(engine::Engine& eng) override {
    const int64_t now = now_ns();
    for (; next_ < items_.size() && t0_ + items_[next_].arrival_ns <= now; ++next_) {
      try {
        const uint64_t id =
            eng.submit(spec_of(items_[next_], opt_.ignore_eos), t0_ + items_[next_].arrival_ns);
        inflight_.push_back(id);
        index_of_[id] = next_;
      } catch (const Error& e) {
        if (e.status() != SY_ERR_INVALID_ARG) throw;
        RequestRecord& rec = log_.requests[next_];
        rec.simple = items_[next_].simple;
        rec.prompt_len = static_cast<uint32_t>(items_[next_].prompt.size());
        rec.max_new_tokens = items_[next_].max_new_tokens;
        rec.arrival_ns = t0_ + items_[next_].arrival_ns;
        rec.error = std::string("refused: ") + e.what();
        ++finished_;
        progress();
      }
    }
  }

  bool keep_going(const engine::Engine&) override {
    if (next_ == items_.size() && inflight_.empty()) return false;
    if (now_ns() >= deadline_) {
      log_.timed_out = true;
      return false;
    }
    return true;
  }

  // Sleeps to the end of the window, the next arrival or the deadline, whichever is first.
  void wait(const engine::Engine& eng, int64_t until_ns) override {
    const int64_t now = now_ns();
    if (eng.idle()) log_.steps.push_back(StepRecord{now, 0, 0, 0, 0, 0, 0, 0, 0});
    int64_t wake = std::min(until_ns, deadline_);
    if (next_ < items_.size()) wake = std::min(wake, t0_ + items_[next_].arrival_ns);
    sleep_until(wake);
  }

  void before_step(engine::Engine& eng) override {
    computed_.resize(inflight_.size());
    for (size_t i = 0; i < inflight_.size(); ++i)
      computed_[i] = eng.request(inflight_[i]).num_computed;
  }

  void after_step(engine::Engine& eng, const engine::StepStats& st, int64_t t0,
                  int64_t dur) override {
    StepRecord s;
    s.t_ns = t0;
    s.dur_ns = dur;
    s.n_seqs = st.n_seqs;
    s.n_tokens = st.n_tokens;
    s.n_prefill_tokens = st.n_prefill_tokens;
    s.n_decode = st.n_decode;
    s.n_waiting = static_cast<uint32_t>(eng.n_waiting());
    s.n_running = static_cast<uint32_t>(eng.n_running());
    s.kv_used_blocks = v_.cache->pool().total() - v_.cache->pool().free_count();
    s.predicted_ns = st.predicted_ns;
    s.exec_ns = st.exec_ns;
    log_.steps.push_back(s);
    if (st.n_tokens > 0) {
      // Split the step's time over its members by the tokens each computed in it.
      for (size_t i = 0; i < inflight_.size(); ++i) {
        const engine::Request& r = eng.request(inflight_[i]);
        const uint32_t after = r.num_computed;
        uint32_t tokens = after >= computed_[i] ? after - computed_[i] : after;
        // Admitted this step: prefix-cache hits became "computed" without running.
        if (computed_[i] == 0 || after < computed_[i])
          tokens -= std::min(tokens, r.prefix_hit_tokens);
        cost_[inflight_[i]] += double(s.dur_ns) * tokens / st.n_tokens;
      }
    }
    sample_memory(v_, inflight_, log_.memory);
    // Finished requests leave in one pass (no quadratic erase under a long queue).
    size_t kept = 0;
    for (size_t i = 0; i < inflight_.size(); ++i) {
      const engine::Request& r = eng.request(inflight_[i]);
      if (r.finish == engine::FinishReason::none) {
        inflight_[kept++] = inflight_[i];
        continue;
      }
      RequestRecord& rec = log_.requests[index_of_[r.id]] = record_of(r, items_[index_of_[r.id]]);
      rec.cost_ns = cost_[r.id];
      ++finished_;
      progress();
    }
    inflight_.resize(kept);
  }

  // After the loop: what never finished.
  void close(const engine::Engine& eng) {
    log_.end_ns = now_ns();
    for (uint64_t id : inflight_) {
      const engine::Request& r = eng.request(id);
      RequestRecord& rec = log_.requests[index_of_[id]] = record_of(r, items_[index_of_[id]]);
      rec.ok = false;
      rec.error = "timed out";
    }
    for (size_t i = next_; i < items_.size(); ++i) {
      log_.requests[i].simple = items_[i].simple;
      log_.requests[i].error = "timed out before it arrived";
    }
  }

 private:
  void progress() {
    if (opt_.on_progress) opt_.on_progress(finished_, items_.size());
  }

  engine::Variant& v_;
  const std::vector<WorkItem>& items_;
  const DriverOptions& opt_;
  RunLog& log_;
  int64_t t0_ = 0, deadline_ = 0;
  std::vector<uint64_t> inflight_;       // engine ids
  std::map<uint64_t, size_t> index_of_;  // engine id -> item
  std::map<uint64_t, double> cost_;      // engine id -> attributed busy ns
  std::vector<uint32_t> computed_;
  size_t next_ = 0, finished_ = 0;
};

}  // namespace

RunLog replay(engine::Variant& v, const std::vector<WorkItem>& items, const DriverOptions& opt) {
  engine::Engine& eng = *v.engine;
  warm_up(eng, items, opt.warmup_requests, opt.ignore_eos);
  RunLog log;
  const auto& mi = v.model->info();
  log.memory.kv_block_bytes = v.cache->bytes_per_block();
  log.memory.kv_window_block_bytes = v.cache->bytes_per_window_block();
  log.memory.kv_allocated_bytes = v.cache->bytes();
  log.memory.state_bytes_per_seq = mi.state_bytes_per_seq;
  log.memory.state_snapshot_slots = eng.snapshot_slots();
  log.requests.resize(items.size());
  const auto counters_before = eng.counters().snapshot();
  Replay replay(v, items, opt, log);
  engine::EngineLoop::run(eng, replay);
  replay.close(eng);
  log.counters = counter_delta(counters_before, eng.counters().snapshot());
  return log;
}

}  // namespace sy::bench
