#include "engine/engine.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <thread>

#include "host/log.h"
#include "host/plan_check.h"
#include "switchyard/common/error.h"

namespace sy::engine {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::stop:
      return "stop";
    case FinishReason::length:
      return "length";
    case FinishReason::context:
      return "context";
    case FinishReason::aborted:
      return "abort";
    default:
      return "none";
  }
}

Engine::Engine(model::Model& model, model::KvCache& cache, Scheduler& scheduler,
               EngineLimits limits)
    : model_(model),
      cache_(cache),
      sched_(scheduler),
      lim_(limits),
      // Prior: a fixed 0.2 ms, weights streamed once per step at ~10 GB/s, 2 flops per active
      // parameter per token at ~50 GFLOP/s, attention over the cached context; refined by
      // observed steps.
      cost_({2e5, model.info().bytes_per_token / 10.0, model.info().n_active_params * 0.04,
             0.32 * model.info().n_attn_layers * model.info().kv_row_width}) {
  const bool recurrent = model.info().state_bytes_per_seq > 0;
  if (recurrent && lim_.prefix_caching && lim_.state_cache == StateCache::none) {
    // A recurrent state summarises the whole prefix; KV blocks alone cannot restore it.
    logger()->warn("prefix caching is off: {} has recurrent layers and [engine] state_cache is "
                   "\"none\"",
                   model.info().arch);
    lim_.prefix_caching = false;
  }
  if (cache.windowed()) {
    // Window blocks are not keyed: a prefix hit could not restore the window before it.
    if (lim_.prefix_caching)
      throw sy::Error("prefix caching needs the sliding-window layers' full cache");
    const uint32_t need = model::KvCache::window_pool_size(cache.window(), cache.block_size(),
                                                           lim_.max_seqs, lim_.max_batch_tokens);
    if (cache.window_pool().total() < need)
      throw sy::Error("the sliding-window KV pool has " +
                      std::to_string(cache.window_pool().total()) + " blocks; " +
                      std::to_string(lim_.max_seqs) + " sequences need " + std::to_string(need));
  }
  if (lim_.max_context == 0 || lim_.max_context > model.info().n_ctx)
    lim_.max_context = model.info().n_ctx;
  if (recurrent) {
    // Slots [0, max_seqs) belong to running requests, the rest hold prefix-cache snapshots.
    const uint64_t per_seq = model.info().state_bytes_per_seq;
    const uint32_t snaps =
        !lim_.prefix_caching ? 0
        : lim_.state_cache_bytes
            ? static_cast<uint32_t>(std::min<uint64_t>(lim_.state_cache_bytes / per_seq, 1u << 20))
        : lim_.state_cache_slots ? lim_.state_cache_slots
                                 : 4 * lim_.max_seqs;
    if (lim_.prefix_caching && snaps == 0) {
      logger()->warn(
          "prefix caching is off: one {} state snapshot takes {} bytes, more than the "
          "[engine] state_cache_mib budget",
          model.info().arch, per_seq);
      lim_.prefix_caching = false;
    } else if (snaps) {
      logger()->info("hybrid prefix cache: {} state snapshots of {:.2f} MiB, {:.1f} MiB in all",
                     snaps, per_seq / 1048576.0, double(snaps) * per_seq / 1048576.0);
    }
    model.reserve_state_slots(lim_.max_seqs + snaps);
    for (uint32_t i = lim_.max_seqs; i-- > 0;) free_state_slots_.push_back(static_cast<int32_t>(i));
    if (snaps)
      snapshots_ = std::make_unique<model::StateSnapshots>(static_cast<int32_t>(lim_.max_seqs), snaps);
  }
  if (lim_.overlap) worker_ = std::make_unique<StepWorker>();
}

Engine::~Engine() {
  if (worker_) worker_->wait();  // the batch computing writes into the cache and state slots
}

uint64_t Engine::submit(RequestSpec spec, int64_t arrival_ns) {
  if (spec.prompt.empty()) throw sy::Error("prompt is empty");
  // max_new_tokens 0: the prompt is computed (and scored), nothing is generated.
  const uint64_t total = spec.prompt.size() + uint64_t(spec.max_new_tokens);
  if (total > lim_.max_context)
    throw sy::Error("prompt of " + std::to_string(spec.prompt.size()) +
                    " tokens + max_new_tokens " + std::to_string(spec.max_new_tokens) +
                    " exceeds the context of " + std::to_string(lim_.max_context));
  if (cache_.blocks_for(static_cast<uint32_t>(total)) > cache_.pool().total())
    throw sy::Error("request needs more KV blocks than the cache has");
  for (int32_t t : spec.prompt)
    if (t < 0 || t >= static_cast<int32_t>(model_.info().n_vocab))
      throw sy::Error("prompt token id " + std::to_string(t) + " outside the vocab");
  auto r = std::make_unique<Request>();
  r->id = next_id_++;
  if (triage) {  // after the checks: a refused request is never routed
    const CounterScope scope(&counters_);
    triage(spec, r->id);
  }
  r->arrival_ns = arrival_ns ? arrival_ns : now_ns();
  r->sampler = text::Sampler(spec.sampling);
  r->sampler.prompt(spec.prompt);
  if (spec.prompt_logprobs) {
    r->prompt_logprobs.resize(spec.prompt.size());
    r->prompt_logprobs[0].token = spec.prompt[0];  // nothing before it to score it by
  }
  r->spec = std::move(spec);
  Request* raw = r.get();
  all_.emplace(raw->id, std::move(r));
  waiting_.push_back(raw);
  return raw->id;
}

void Engine::update_hashes(Request& r) const {
  const uint32_t bs = cache_.block_size();
  const uint32_t full = r.known_tokens() / bs;
  if (r.hashes.size() >= full) return;
  std::vector<int32_t> toks(full * bs);
  for (uint32_t i = 0; i < toks.size(); ++i) toks[i] = r.token_at(i);
  r.hashes = model::block_hashes(toks.data(), toks.size(), bs);
}

// Tokens a waiting request starts from once admitted: its cached prefix as shown to the scheduler.
uint32_t Engine::computed_if_admitted(const Request& r) const {
  return r.running ? r.planned_computed() : r.view_hit_blocks * cache_.block_size();
}

// A running request whose last token the computing step samples: it leaves when that commits,
// so planning does not see it.
bool Engine::finishing(const Request& r) const {
  return r.inflight_outputs > 0 && (r.output.size() + r.inflight_outputs >= r.spec.max_new_tokens ||
                                    r.planned_known() >= lim_.max_context);
}

// The request with this id while it is not finished, else null.
Request* Engine::live(uint64_t id) const {
  auto it = all_.find(id);
  return it == all_.end() || it->second->finish != FinishReason::none ? nullptr : it->second.get();
}

void Engine::admit(Request& r, int64_t now) {
  waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &r));
  running_.push_back(&r);
  r.running = true;
  if (!r.first_scheduled_ns) r.first_scheduled_ns = now;
  if (model_.info().state_bytes_per_seq > 0) {  // max_seqs bounds the running set
    r.state_slot = free_state_slots_.back();
    free_state_slots_.pop_back();
  }
  if (lim_.prefix_caching) {
    cache_.pool().acquire_cached(r.hashes, r.view_hit_blocks, r.blocks);
    r.num_computed = r.view_hit_blocks * cache_.block_size();
    r.published_blocks = r.view_hit_blocks;
    r.prefix_hit_tokens = r.num_computed;
    if (snapshots_ && r.view_hit_blocks > 0) {
      // The plan was made on this snapshot and nothing evicts between plan and admission.
      r.restore_slot = snapshots_->pin(r.hashes[r.view_hit_blocks - 1]);
      if (r.restore_slot < 0) throw sy::Bug("admitted on a state snapshot that is gone");
      count("state_cache_restores", 1);
    }
    count("prefix_cache_query_tokens", r.known_tokens());
    count("prefix_cache_hit_tokens", r.num_computed);
  }
}

// The longest cached prefix a request with recurrent layers can resume from: KV blocks alone
// are not enough, the state after the last of them must have been snapshotted too.
uint32_t Engine::snapshot_hit(const Request& r, uint32_t kv_hit_blocks) const {
  for (uint32_t b = kv_hit_blocks; b > 0; --b)
    if (snapshots_->has(r.hashes[b - 1])) return b;
  return 0;
}

// Which block boundaries of a member's chunk get a snapshot: inside the prompt, every one
// (state_cache "all") or only the last before the prompt's final token ("last"), unless that
// prefix already has one.
void Engine::plan_snapshots(Request& r, size_t member, Batch& b) {
  const Batch::Member& m = b.members[member];
  const uint32_t bs = cache_.block_size();
  const uint32_t prompt = static_cast<uint32_t>(r.spec.prompt.size());
  const uint32_t last = (prompt - 1) / bs * bs;
  update_hashes(r);
  for (uint32_t edge = (m.pos0 / bs + 1) * bs; edge <= m.pos0 + m.n_tokens && edge <= prompt;
       edge += bs) {
    if (lim_.state_cache == StateCache::last && edge != last) continue;
    const int32_t slot = snapshots_->reserve(r.hashes[edge / bs - 1]);
    if (slot < 0) continue;  // already cached, or every snapshot slot is in use
    b.snapshot_points[member].push_back({edge - m.pos0, slot});
    b.snapshots.push_back({member, slot});
  }
}

// A pass is over: its snapshots become findable where it succeeded and published the KV blocks
// they extend (not for a request cancelled meanwhile), and its restores are done.
void Engine::settle_snapshots(Batch& b, const std::vector<bool>* committed) {
  if (!snapshots_) return;
  for (const Batch::Snapshot& s : b.snapshots) {
    if (committed && (*committed)[s.member]) {
      snapshots_->publish(s.slot);
      count("state_cache_snapshots", 1);
    } else {
      snapshots_->abandon(s.slot);
    }
  }
  for (int32_t slot : b.restores) snapshots_->unpin(slot);
  b.snapshots.clear();
  b.restores.clear();
}

void Engine::unpin_restore(Request& r) {
  if (r.restore_slot >= 0) snapshots_->unpin(r.restore_slot);
  r.restore_slot = -1;
}

void Engine::publish_blocks(Request& r) {
  if (!lim_.prefix_caching) return;
  const uint32_t full = r.num_computed / cache_.block_size();
  if (full <= r.published_blocks) return;
  update_hashes(r);
  const uint32_t bs = cache_.block_size();
  std::vector<int32_t> toks;  // the block's tokens, only for an observer (KV events)
  for (uint32_t b = r.published_blocks; b < full; ++b) {
    if (cache_.pool().observed()) {
      toks.resize(bs);
      for (uint32_t i = 0; i < bs; ++i) toks[i] = r.token_at(b * bs + i);
    }
    cache_.pool().publish(r.blocks[b], r.hashes[b], b ? r.hashes[b - 1] : 0, toks);
  }
  r.published_blocks = full;
}

// The view-only checks (host/plan_check.h), then what only the engine knows: the KV blocks the
// plan needs, shared prefix blocks included.
void Engine::validate(const sy_sched_view& view, const sy_sched_plan& p) const {
  check_plan(view, p);
  std::set<uint64_t> preempted;
  uint32_t freed = 0;
  for (uint32_t i = 0; i < p.n_preempt; ++i)
    if (preempted.insert(p.preempt[i]).second)
      freed += static_cast<uint32_t>(live(p.preempt[i])->blocks.size());
  uint32_t need_blocks = 0;
  for (uint32_t i = 0; i < p.n_entries; ++i) {
    const sy_sched_entry& e = p.entries[i];
    const Request& r = *live(e.id);
    const uint32_t computed = computed_if_admitted(r);
    uint32_t have = static_cast<uint32_t>(r.blocks.size());
    if (!r.running) {
      have = r.view_hit_blocks;  // shared prefix blocks it will hold
      if (lim_.prefix_caching)
        need_blocks += cache_.pool().unreferenced_among(r.hashes, r.view_hit_blocks);
    }
    const uint32_t want = cache_.blocks_for(computed + e.num_tokens);
    if (want > have) need_blocks += want - have;
  }
  if (need_blocks > cache_.pool().free_count() + freed)
    throw Error(SY_ERR_INVALID_ARG,
                "plan needs " + std::to_string(need_blocks) + " new KV blocks, " +
                    std::to_string(cache_.pool().free_count() + freed) + " are free");
}

// What the host runs when a scheduler fails or returns an invalid plan: running requests first
// (newest preempted when blocks run out), then FCFS admission while the full request fits.
void Engine::fallback_plan(sy_sched_plan& p) const {
  p.n_entries = p.n_preempt = 0;
  p.wait_ns = 0;
  uint32_t budget = lim_.max_batch_tokens;
  int64_t free_blocks = cache_.pool().free_count();
  std::vector<const Request*> keep;
  for (const Request* r : running_)
    if (!finishing(*r)) keep.push_back(r);
  auto need = [&](const Request* r, uint32_t n) {
    return int64_t(cache_.blocks_for(r->planned_computed() + n)) - int64_t(r->blocks.size());
  };
  while (!keep.empty()) {
    int64_t total = 0;
    for (const Request* r : keep) total += std::max<int64_t>(0, need(r, 1));
    if (total <= free_blocks) break;
    p.preempt[p.n_preempt++] = keep.back()->id;
    free_blocks += keep.back()->blocks.size();
    keep.pop_back();
  }
  for (const Request* r : keep) {
    const uint32_t n = std::min(r->planned_known() - r->planned_computed(), budget);
    if (n == 0) continue;
    const int64_t nb = std::max<int64_t>(0, need(r, n));
    if (nb > free_blocks) continue;
    free_blocks -= nb;
    budget -= n;
    p.entries[p.n_entries++] = sy_sched_entry{r->id, n, 0};
  }
  size_t seqs = keep.size();
  for (const Request* r : waiting_) {
    if (budget == 0 || seqs >= lim_.max_seqs || p.n_entries >= p.entries_capacity) break;
    // Conservative: the whole request must fit without counting its cached prefix.
    const int64_t full = cache_.blocks_for(r->known_tokens() + r->spec.max_new_tokens);
    if (full > free_blocks) break;
    const uint32_t from = computed_if_admitted(*r);
    const uint32_t n = std::min(r->known_tokens() - from, budget);
    free_blocks -= cache_.blocks_for(from + n);
    budget -= n;
    ++seqs;
    p.entries[p.n_entries++] = sy_sched_entry{r->id, n, 0};
  }
}

void Engine::release_state(Request& r) {
  if (r.state_slot >= 0) free_state_slots_.push_back(r.state_slot);
  r.state_slot = -1;
}

void Engine::release_blocks(Request& r) {
  cache_.pool().release(r.blocks);
  if (cache_.windowed()) cache_.release_window(r.window_blocks);
}

void Engine::preempt(Request& r) {
  release_blocks(r);
  release_state(r);
  unpin_restore(r);
  r.num_computed = 0;
  r.published_blocks = r.view_hit_blocks = 0;
  r.running = false;
  ++r.num_preemptions;
  count("num_preemptions", 1);
  running_.erase(std::find(running_.begin(), running_.end(), &r));
  waiting_.insert(waiting_.begin(), &r);  // resumes first
}

void Engine::finish(Request& r, FinishReason why, int64_t now) {
  r.finish = why;
  r.finish_ns = now;
  release_blocks(r);
  release_state(r);
  unpin_restore(r);
  r.running = false;
  r.inflight_tokens = r.inflight_outputs = 0;  // a step still computing for it is discarded
  running_.erase(std::find(running_.begin(), running_.end(), &r));
}

bool Engine::cancel(uint64_t id) {
  auto it = all_.find(id);
  if (it == all_.end() || it->second->finish != FinishReason::none) return false;
  Request& r = *it->second;
  if (r.running) {
    finish(r, FinishReason::aborted, now_ns());
  } else {  // waiting requests hold no blocks (a preemption released them)
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &r));
    r.finish = FinishReason::aborted;
    r.finish_ns = now_ns();
  }
  return true;
}

void Engine::forget(uint64_t id) {
  auto it = all_.find(id);
  if (it != all_.end() && it->second->finish != FinishReason::none) all_.erase(it);
}

}  // namespace sy::engine
