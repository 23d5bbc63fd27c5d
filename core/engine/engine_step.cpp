// One engine step in four phases: plan (scheduler view and decision), apply (preemptions,
// admissions, KV blocks), launch/execute (the forward pass, on the worker with overlap) and
// commit (sample, publish prefix blocks, retire). With overlap, step() plans and applies step
// N+1 while step N executes, then commits N and launches N+1.
#include <algorithm>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "engine/engine.h"
#include "engine/engine_loop.h"
#include "host/host_api.h"
#include "host/log.h"
#include "switchyard/common/error.h"

namespace sy::engine {

namespace {

// The scheduler's picture of a request as it will be once the computing step commits.
sy_sched_request view_of(const Request& r) {
  sy_sched_request v{};
  v.struct_size = sizeof(v);
  v.state = r.running ? SY_REQ_RUNNING : SY_REQ_WAITING;
  v.id = r.id;
  v.arrival_ns = r.arrival_ns;
  v.priority = r.spec.priority;
  // After a preemption the generated tokens are recomputed like prompt tokens.
  v.prompt_len = static_cast<uint32_t>(r.spec.prompt.size());
  v.max_new_tokens = r.spec.max_new_tokens;
  v.num_computed = r.planned_computed();
  v.num_generated = static_cast<uint32_t>(r.output.size()) + r.inflight_outputs;
  v.num_preemptions = r.num_preemptions;
  v.path = r.spec.path;
  return v;
}

}  // namespace

Engine::PlannedStep Engine::plan_step() {
  std::vector<sy_sched_request> wv, rv;
  const uint32_t bs = cache_.block_size();
  const std::unordered_set<model::BlockHash> prefilling = prefilling_blocks();
  for (Request* r : waiting_) {
    r->view_hit_blocks = 0;
    uint32_t pending = 0;
    if (lim_.prefix_caching) {
      update_hashes(*r);
      // At least one token is always computed, so its logits exist; a prompt to score is
      // computed whole.
      const uint32_t cap = r->spec.prompt_logprobs ? 0 : (r->known_tokens() - 1) / bs;
      r->view_hit_blocks = cache_.pool().match(r->hashes, cap);
      while (r->view_hit_blocks + pending < cap &&
             prefilling.count(r->hashes[r->view_hit_blocks + pending]))
        ++pending;
      if (snapshots_) r->view_hit_blocks = snapshot_hit(*r, r->view_hit_blocks);
    }
    wv.push_back(view_of(*r));
    wv.back().prefix_hit_len = r->view_hit_blocks * bs;
    wv.back().prefix_pending_len = pending * bs;
  }
  for (const Request* r : running_)
    if (!finishing(*r)) rv.push_back(view_of(*r));
  sy_sched_view view{};
  view.struct_size = sizeof(view);
  view.request_size = sizeof(sy_sched_request);
  view.now_ns = now_ns();
  view.waiting = wv.data();
  view.n_waiting = static_cast<uint32_t>(wv.size());
  view.running = rv.data();
  view.n_running = static_cast<uint32_t>(rv.size());
  view.kv_block_size = cache_.block_size();
  view.kv_total_blocks = cache_.pool().total();
  view.kv_free_blocks = cache_.pool().free_count();
  view.max_context = lim_.max_context;
  view.max_batch_tokens = lim_.max_batch_tokens;
  view.max_seqs = lim_.max_seqs;
  view.estimate_step_ns = &CostModel::estimate_cb;
  view.cost_ctx = &cost_;
  view.kv_cached_free_blocks = cache_.pool().cached_free_count();
  view.prefix_caching = lim_.prefix_caching ? 1 : 0;
  view.state_slots_total = model_.info().state_bytes_per_seq > 0 ? lim_.max_seqs : 0;
  // Slots of finishing requests come back only when their step commits.
  view.state_slots_free = static_cast<uint32_t>(free_state_slots_.size());
  view.host_ctx = &counters_;
  view.state_slots_snapshots = snapshot_slots();
  view.state_slots_cached = snapshots_held();

  // The plugin writes straight into the step's own lists, which then shrink to what it wrote.
  PlannedStep out;
  out.entries.assign(waiting_.size() + running_.size() + 1, sy_sched_entry{});
  out.preempt.assign(running_.size() + 1, 0);
  sy_sched_plan plan{};
  plan.struct_size = sizeof(plan);
  plan.entries_capacity = static_cast<uint32_t>(out.entries.size());
  plan.entries = out.entries.data();
  plan.preempt_capacity = static_cast<uint32_t>(out.preempt.size());
  plan.preempt = out.preempt.data();
  std::string error;  // why the plan is refused; the step then runs the fallback plan
  bool planned = false;
  try {
    {
      // Counters the plugin adds without host_ctx (older plugins), or the host on its behalf
      // (an isolated plugin's forwarded ones), belong to this engine too.
      const CounterScope scope(&counters_);
      sched_.plan(view, plan);
    }
    planned = true;
    validate(view, plan);
  } catch (const Bug&) {
    throw;  // ours, not the plugin's: the fallback would hide it
  } catch (const Error& e) {
    error = planned ? e.what() : std::string("plan failed: ") + e.what();
  }
  if (!error.empty()) {
    ++invalid_plans_;
    out.batch.plan_rejected = true;
    count("scheduler_invalid_plans", 1);
    logger()->error("scheduler {}: {}; running the host's fallback plan for this step",
                    sched_.name(), error);
    fallback_plan(plan);
  }
  out.entries.resize(plan.n_entries);
  out.preempt.resize(plan.n_preempt);
  out.wait_ns = plan.wait_ns;
  return out;
}

// KV blocks of running requests' prompts they have not computed yet: a waiting request that
// shares them finds them cached a few steps from now.
std::unordered_set<model::BlockHash> Engine::prefilling_blocks() {
  std::unordered_set<model::BlockHash> out;
  if (!lim_.prefix_caching) return out;
  const uint32_t bs = cache_.block_size();
  for (Request* r : running_) {
    const uint32_t prompt_blocks = static_cast<uint32_t>(r->spec.prompt.size()) / bs;
    if (r->planned_computed() >= prompt_blocks * bs) continue;
    update_hashes(*r);
    for (uint32_t b = r->planned_computed() / bs; b < prompt_blocks; ++b) out.insert(r->hashes[b]);
  }
  return out;
}

// While a step computes, a plan may change only what that step does not read: no preemption
// (its blocks and state are in use) and no admission beyond the state slots free now (finishing
// requests return theirs at commit).
bool Engine::can_apply_now(const PlannedStep& p) const {
  if (!p.preempt.empty()) return false;
  size_t admissions = 0;
  for (const sy_sched_entry& e : p.entries)
    if (const Request* r = live(e.id); r && !r->running) ++admissions;
  return running_.size() + admissions <= lim_.max_seqs;
}

void Engine::apply(PlannedStep& p) {
  for (uint64_t id : p.preempt)
    if (Request* r = live(id); r && r->running) preempt(*r);
  const int64_t now = now_ns();
  // Admissions take their cached prefix blocks before anyone allocates, so no allocation can
  // evict a block this step is about to share.
  for (const sy_sched_entry& e : p.entries)
    if (Request* r = live(e.id); r && !r->running) admit(*r, now);
  for (const sy_sched_entry& e : p.entries) {
    Request* r = live(e.id);
    if (!r) continue;  // finished by the step that committed since the plan was made
    const uint32_t pos0 = r->planned_computed();
    const uint32_t want = cache_.blocks_for(pos0 + e.num_tokens);
    if (want > r->blocks.size() && !cache_.pool().allocate(want - r->blocks.size(), r->blocks))
      throw sy::Bug("validated plan ran out of KV blocks");
    // The window pool is sized so that it cannot run short (KvCache::window_pool_size).
    if (cache_.windowed() && !cache_.advance_window(r->window_blocks, pos0, pos0 + e.num_tokens))
      throw sy::Bug("the sliding-window layers' KV pool ran out");
    p.batch.members.push_back({r->id, pos0, e.num_tokens});
  }
  peak_blocks_ = std::max(peak_blocks_, cache_.pool().total() - cache_.pool().free_count());
  // A snapshot is only useful with every KV block before it: allocations may have evicted some.
  if (snapshots_)
    snapshots_->drop_unless([&](model::BlockHash h) { return cache_.pool().match({h}, 1) == 1; });
  // Peak memory per triage path: the KV blocks its running requests hold plus one recurrent
  // state each (shared prefix blocks count for every holder).
  std::map<uint32_t, uint64_t> path_bytes;
  for (const Request* r : running_) {
    const auto window = std::count_if(r->window_blocks.begin(), r->window_blocks.end(),
                                      [](int32_t b) { return b >= 0; });
    path_bytes[r->spec.path] += r->blocks.size() * cache_.bytes_per_block() +
                                window * cache_.bytes_per_window_block() +
                                model_.info().state_bytes_per_seq;
  }
  for (const auto& [path, bytes] : path_bytes)
    peak_path_bytes_[path] = std::max(peak_path_bytes_[path], bytes);
}

// Freezes the batch's inputs (every token it reads is known by now) and marks its requests'
// progress as in flight. Members finished since the plan was applied are dropped.
void Engine::launch(Batch& b) {
  const size_t dropped =
      std::erase_if(b.members, [&](const Batch::Member& m) { return live(m.id) == nullptr; });
  if (dropped) count("overlap_dropped_entries", double(dropped));
  b.tokens.resize(b.members.size());
  b.tables.resize(b.members.size());
  b.window_tables.resize(b.members.size());
  b.snapshot_points.assign(b.members.size(), {});
  b.inputs.clear();
  b.shape = sy_step_shape{sizeof(sy_step_shape), 0, 0, 0, 0};
  StepStats& st = b.stats;
  st = StepStats{};
  st.plan_rejected = b.plan_rejected;
  for (size_t i = 0; i < b.members.size(); ++i) {
    const Batch::Member& m = b.members[i];
    Request& r = *live(m.id);
    b.tokens[i].resize(m.n_tokens);
    for (uint32_t j = 0; j < m.n_tokens; ++j) b.tokens[i][j] = r.token_at(m.pos0 + j);
    b.tables[i] = r.blocks;
    model::SeqInput in;
    in.tokens = b.tokens[i].data();
    in.n_tokens = m.n_tokens;
    in.pos0 = m.pos0;
    in.blocks = &b.tables[i];
    if (cache_.windowed()) {
      b.window_tables[i] = r.window_blocks;
      in.window_blocks = &b.window_tables[i];
    }
    const bool samples = m.pos0 + m.n_tokens == r.known_tokens();
    in.all_logits = r.spec.prompt_logprobs && m.pos0 + 1 < r.spec.prompt.size();
    in.want_logits = samples || in.all_logits;
    in.state_slot = r.state_slot;
    in.n_expert_used = static_cast<int32_t>(r.spec.n_expert_used);
    if (snapshots_) {
      in.restore_from = r.restore_slot;  // its first pass since a hit: the pass owns the pin now
      if (r.restore_slot >= 0) b.restores.push_back(r.restore_slot);
      r.restore_slot = -1;
      plan_snapshots(r, i, b);
      in.snapshots = &b.snapshot_points[i];
    }
    b.inputs.push_back(in);
    r.inflight_tokens = m.n_tokens;
    r.inflight_outputs = samples ? 1 : 0;  // with max_new_tokens 0 it ends there instead
    st.n_tokens += m.n_tokens;
    if (m.pos0 + m.n_tokens > r.spec.prompt.size() && m.n_tokens == 1)
      ++st.n_decode;
    else
      st.n_prefill_tokens += m.n_tokens;
    b.shape.kv_ctx_tokens += m.pos0 + m.n_tokens;
  }
  b.shape.n_prefill_tokens = st.n_prefill_tokens;
  b.shape.n_decode_seqs = st.n_decode;
  st.n_seqs = static_cast<uint32_t>(b.inputs.size());
  if (st.n_seqs) st.predicted_ns = cost_.estimate(b.shape);
}

void Engine::execute(Batch& b) noexcept {
  const CounterScope scope(&counters_);  // the model's counters (MoE expert loads)
  const int64_t t0 = now_ns();
  try {
    b.logits = model_.forward(b.inputs, cache_);
  } catch (...) {
    b.error = std::current_exception();
  }
  b.exec_ns = now_ns() - t0;
}

// Each prompt token the chunk's rows predict: row j holds the logits after position pos0 + j.
void Engine::score_prompt(Request& r, const model::SeqInput& in, const float* rows) {
  const uint32_t V = model_.info().n_vocab;
  const int32_t top = std::max(r.spec.sampling.logprobs, 0);
  for (uint32_t j = 0; j < in.n_tokens; ++j) {
    const size_t next = size_t(in.pos0) + j + 1;
    if (next >= r.spec.prompt.size()) break;
    r.prompt_logprobs[next] =
        text::token_logprob(rows + size_t(j) * V, int32_t(V), r.spec.prompt[next], top);
  }
}

StepStats Engine::commit(Batch& b) {
  if (b.error) {
    // Nothing of a failed pass counts: its requests stay where they were.
    for (const Batch::Member& m : b.members)
      if (Request* r = live(m.id)) r->inflight_tokens = r->inflight_outputs = 0;
    settle_snapshots(b, nullptr);
    std::rethrow_exception(b.error);
  }
  cost_.observe(b.shape, b.exec_ns);
  b.stats.exec_ns = b.exec_ns;
  const int64_t now = now_ns();
  const uint32_t V = model_.info().n_vocab;
  size_t row = 0;
  std::vector<bool> committed(b.members.size(), false);
  for (size_t i = 0; i < b.members.size(); ++i) {
    const model::SeqInput& in = b.inputs[i];
    const uint32_t rows = in.want_logits ? (in.all_logits ? in.n_tokens : 1) : 0;
    const float* first = b.logits.data() + size_t(row) * V;
    row += rows;
    Request* found = live(b.members[i].id);
    if (!found) continue;  // cancelled while it computed
    Request& r = *found;
    r.inflight_tokens = r.inflight_outputs = 0;
    r.num_computed += in.n_tokens;
    publish_blocks(r);
    committed[i] = true;
    if (in.all_logits) score_prompt(r, in, first);
    if (in.pos0 + in.n_tokens != r.known_tokens()) continue;  // a prompt chunk before the last
    if (r.spec.max_new_tokens == 0) {                         // scored, nothing to generate
      finish(r, FinishReason::length, now);
      continue;
    }
    const float* logits = first + size_t(rows - 1) * V;
    text::TokenLogprob* lp = r.spec.sampling.logprobs >= 0 ? &r.logprobs.emplace_back() : nullptr;
    const int32_t tok = r.sampler.sample(logits, static_cast<int32_t>(V), lp);
    r.output.push_back(tok);
    r.token_ns.push_back(now);
    if (on_token) on_token(r, tok);
    const bool eos =
        r.spec.stop_at_eos && std::find(lim_.eos.begin(), lim_.eos.end(), tok) != lim_.eos.end();
    if (eos || r.sampler.finished())  // an end token, or a grammar's output is complete
      finish(r, FinishReason::stop, now);
    else if (r.output.size() >= r.spec.max_new_tokens)
      finish(r, FinishReason::length, now);
    else if (r.known_tokens() >= lim_.max_context)
      finish(r, FinishReason::context, now);
  }
  settle_snapshots(b, &committed);
  return b.stats;
}

StepStats Engine::step() {
  if (!lim_.overlap || !inflight_) {
    PlannedStep p = plan_step();
    apply(p);
    launch(p.batch);
    if (p.batch.inputs.empty()) {
      StepStats st = p.batch.stats;
      st.wait_ns = p.wait_ns;
      return st;
    }
    if (!lim_.overlap) {
      execute(p.batch);
      return commit(p.batch);
    }
    start_on_worker(std::move(p.batch));
  }
  // Step N computes on the worker: plan N+1 on the optimistic view and, where nothing of N is
  // touched, apply it too.
  const int64_t t_plan = now_ns();
  PlannedStep next = plan_step();
  const bool early = can_apply_now(next);
  if (early) apply(next);
  const int64_t t_wait = now_ns();
  count("overlap_hidden_host_ns", double(t_wait - t_plan));
  worker_->wait();
  count("overlap_wait_ns", double(now_ns() - t_wait));
  const std::unique_ptr<Batch> done = std::move(inflight_);
  const StepStats st = commit(*done);  // a failed pass throws; `next` launched nothing yet
  if (!early) {
    count("overlap_deferred_plans", 1);
    apply(next);
  }
  launch(next.batch);  // drops the entries of requests step N finished
  if (!next.batch.inputs.empty()) start_on_worker(std::move(next.batch));
  return st;
}

void Engine::start_on_worker(Batch&& b) {
  inflight_ = std::make_unique<Batch>(std::move(b));
  worker_->start([this, batch = inflight_.get()] { execute(*batch); });
}

namespace {

// Offline: every request is already queued, so waiting only lets the window expire.
class QueuedWork : public WorkSource {
 public:
  void intake(Engine&) override {}
  bool keep_going(const Engine& e) override { return !e.idle(); }
  void wait(const Engine&, int64_t until_ns) override {
    std::this_thread::sleep_for(std::chrono::nanoseconds(until_ns - now_ns()));
  }
};

}  // namespace

void Engine::run_until_idle() {
  QueuedWork work;
  EngineLoop::run(*this, work);
}

}  // namespace sy::engine
