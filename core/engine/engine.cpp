#include "engine/engine.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <thread>

#include "host/host_api.h"
#include "host/log.h"

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
      // Prior: weights streamed once per step at ~10 GB/s, 2 flops per active parameter per
      // token at ~50 GFLOP/s, attention over the cached context; refined by observed steps.
      cost_(model.info().bytes_per_token / 10.0, model.info().n_active_params * 0.04,
            model.info().n_active_params * 0.04,
            0.32 * model.info().n_attn_layers * model.info().kv_row_width) {
  if (model.info().state_bytes_per_seq > 0 && lim_.prefix_caching) {
    // A recurrent state summarises the whole prefix; KV blocks alone cannot restore it.
    logger()->warn("prefix caching is off: {} has recurrent layers", model.info().arch);
    lim_.prefix_caching = false;
  }
  if (lim_.max_context == 0 || lim_.max_context > model.info().n_ctx)
    lim_.max_context = model.info().n_ctx;
  if (model.info().state_bytes_per_seq > 0) {
    model.reserve_state_slots(lim_.max_seqs);
    for (uint32_t i = lim_.max_seqs; i-- > 0;) free_state_slots_.push_back(static_cast<int32_t>(i));
  }
  if (lim_.overlap) worker_ = std::make_unique<StepWorker>();
}

Engine::~Engine() {
  if (worker_) worker_->wait();  // the batch computing writes into the cache and state slots
}

uint64_t Engine::submit(RequestSpec spec, int64_t arrival_ns) {
  if (spec.prompt.empty()) throw std::invalid_argument("prompt is empty");
  if (spec.max_new_tokens == 0) throw std::invalid_argument("max_new_tokens must be at least 1");
  const uint64_t total = spec.prompt.size() + uint64_t(spec.max_new_tokens);
  if (total > lim_.max_context)
    throw std::invalid_argument("prompt of " + std::to_string(spec.prompt.size()) +
                                " tokens + max_new_tokens " + std::to_string(spec.max_new_tokens) +
                                " exceeds the context of " + std::to_string(lim_.max_context));
  if (cache_.blocks_for(static_cast<uint32_t>(total)) > cache_.pool().total())
    throw std::invalid_argument("request needs more KV blocks than the cache has");
  for (int32_t t : spec.prompt)
    if (t < 0 || t >= static_cast<int32_t>(model_.info().n_vocab))
      throw std::invalid_argument("prompt token id " + std::to_string(t) + " outside the vocab");
  auto r = std::make_unique<Request>();
  r->id = next_id_++;
  if (triage) triage(spec, r->id);  // after the checks: a refused request is never routed
  r->arrival_ns = arrival_ns ? arrival_ns : now_ns();
  r->sampler = text::Sampler(spec.sampling);
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
    host_counter_add("prefix_cache_query_tokens", r.known_tokens());
    host_counter_add("prefix_cache_hit_tokens", r.num_computed);
  }
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

std::string Engine::validate(const sy_sched_plan& p) const {
  if (p.n_entries > p.entries_capacity) return "plan has more entries than its capacity";
  if (p.n_preempt > p.preempt_capacity) return "plan has more preemptions than its capacity";
  std::set<uint64_t> seen, preempted;
  uint32_t freed = 0;
  for (uint32_t i = 0; i < p.n_preempt; ++i) {
    const Request* r = live(p.preempt[i]);
    if (!r || !r->running || finishing(*r))
      return "preempt " + std::to_string(i) + ": request " + std::to_string(p.preempt[i]) +
             " is not running";
    if (!preempted.insert(p.preempt[i]).second)
      return "preempt " + std::to_string(i) + ": request " + std::to_string(p.preempt[i]) +
             " listed twice";
    freed += static_cast<uint32_t>(r->blocks.size());
  }
  uint64_t tokens = 0;
  uint32_t need_blocks = 0;
  size_t seqs = running_.size() - preempted.size();
  for (const Request* r : running_) seqs -= finishing(*r) ? 1 : 0;
  for (uint32_t i = 0; i < p.n_entries; ++i) {
    const sy_sched_entry& e = p.entries[i];
    const std::string where = "entry " + std::to_string(i) + ": ";
    const Request* found = live(e.id);
    if (!found || finishing(*found)) return where + "unknown request id " + std::to_string(e.id);
    if (!seen.insert(e.id).second)
      return where + "request " + std::to_string(e.id) + " scheduled twice";
    if (preempted.count(e.id))
      return where + "request " + std::to_string(e.id) + " is both preempted and scheduled";
    const Request& r = *found;
    const uint32_t computed = computed_if_admitted(r);
    const uint32_t remaining = r.planned_known() - computed;
    if (e.num_tokens == 0 || e.num_tokens > remaining)
      return where + "request " + std::to_string(e.id) + " asks for " +
             std::to_string(e.num_tokens) + " tokens, it has " + std::to_string(remaining) +
             " to compute";
    tokens += e.num_tokens;
    uint32_t have = static_cast<uint32_t>(r.blocks.size());
    if (!r.running) {
      ++seqs;
      have = r.view_hit_blocks;  // shared prefix blocks it will hold
      if (lim_.prefix_caching)
        need_blocks += cache_.pool().unreferenced_among(r.hashes, r.view_hit_blocks);
    }
    const uint32_t want = cache_.blocks_for(computed + e.num_tokens);
    if (want > have) need_blocks += want - have;
  }
  if (tokens > lim_.max_batch_tokens)
    return "plan carries " + std::to_string(tokens) + " tokens, over the budget of " +
           std::to_string(lim_.max_batch_tokens);
  if (seqs > lim_.max_seqs)
    return "plan runs " + std::to_string(seqs) + " sequences, over max_seqs " +
           std::to_string(lim_.max_seqs);
  if (need_blocks > cache_.pool().free_count() + freed)
    return "plan needs " + std::to_string(need_blocks) + " new KV blocks, " +
           std::to_string(cache_.pool().free_count() + freed) + " are free";
  return {};
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

void Engine::preempt(Request& r) {
  cache_.pool().release(r.blocks);
  release_state(r);
  r.num_computed = 0;
  r.published_blocks = r.view_hit_blocks = 0;
  r.running = false;
  ++r.num_preemptions;
  host_counter_add("num_preemptions", 1);
  running_.erase(std::find(running_.begin(), running_.end(), &r));
  waiting_.insert(waiting_.begin(), &r);  // resumes first
}

void Engine::finish(Request& r, FinishReason why, int64_t now) {
  r.finish = why;
  r.finish_ns = now;
  cache_.pool().release(r.blocks);
  release_state(r);
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
