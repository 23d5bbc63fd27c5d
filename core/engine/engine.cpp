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
    case FinishReason::stop: return "stop";
    case FinishReason::length: return "length";
    case FinishReason::context: return "context";
    case FinishReason::aborted: return "abort";
    default: return "none";
  }
}

Engine::Engine(model::Model& model, model::KvCache& cache, Scheduler& scheduler,
               EngineLimits limits)
    : model_(model), cache_(cache), sched_(scheduler), lim_(limits),
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
  if (lim_.max_context == 0 || lim_.max_context > model.info().n_ctx) lim_.max_context = model.info().n_ctx;
  if (model.info().state_bytes_per_seq > 0) {
    model.reserve_state_slots(lim_.max_seqs);
    for (uint32_t i = lim_.max_seqs; i-- > 0;) free_state_slots_.push_back(static_cast<int32_t>(i));
  }
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
  r->arrival_ns = arrival_ns ? arrival_ns : now_ns();
  r->sampler = text::Sampler(spec.sampling);
  r->spec = std::move(spec);
  Request* raw = r.get();
  all_.emplace(raw->id, std::move(r));
  waiting_.push_back(raw);
  return raw->id;
}

namespace {

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
  v.num_computed = r.num_computed;
  v.num_generated = static_cast<uint32_t>(r.output.size());
  v.num_preemptions = r.num_preemptions;
  v.path = r.spec.path;
  return v;
}

}  // namespace

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
  return r.running ? r.num_computed : r.view_hit_blocks * cache_.block_size();
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
  for (uint32_t b = r.published_blocks; b < full; ++b) cache_.pool().publish(r.blocks[b], r.hashes[b]);
  r.published_blocks = full;
}

std::string Engine::validate(const sy_sched_plan& p) const {
  if (p.n_entries > p.entries_capacity) return "plan has more entries than its capacity";
  if (p.n_preempt > p.preempt_capacity) return "plan has more preemptions than its capacity";
  std::set<uint64_t> seen, preempted;
  uint32_t freed = 0;
  for (uint32_t i = 0; i < p.n_preempt; ++i) {
    auto it = all_.find(p.preempt[i]);
    if (it == all_.end() || !it->second->running)
      return "preempt " + std::to_string(i) + ": request " + std::to_string(p.preempt[i]) + " is not running";
    if (!preempted.insert(p.preempt[i]).second)
      return "preempt " + std::to_string(i) + ": request " + std::to_string(p.preempt[i]) + " listed twice";
    freed += static_cast<uint32_t>(it->second->blocks.size());
  }
  uint64_t tokens = 0;
  uint32_t need_blocks = 0;
  size_t seqs = running_.size() - preempted.size();
  for (uint32_t i = 0; i < p.n_entries; ++i) {
    const sy_sched_entry& e = p.entries[i];
    const std::string where = "entry " + std::to_string(i) + ": ";
    auto it = all_.find(e.id);
    if (it == all_.end() || it->second->finish != FinishReason::none)
      return where + "unknown request id " + std::to_string(e.id);
    if (!seen.insert(e.id).second) return where + "request " + std::to_string(e.id) + " scheduled twice";
    if (preempted.count(e.id)) return where + "request " + std::to_string(e.id) + " is both preempted and scheduled";
    const Request& r = *it->second;
    const uint32_t computed = computed_if_admitted(r);
    const uint32_t remaining = r.known_tokens() - computed;
    if (e.num_tokens == 0 || e.num_tokens > remaining)
      return where + "request " + std::to_string(e.id) + " asks for " + std::to_string(e.num_tokens) +
             " tokens, it has " + std::to_string(remaining) + " to compute";
    tokens += e.num_tokens;
    uint32_t have = static_cast<uint32_t>(r.blocks.size());
    if (!r.running) {
      ++seqs;
      have = r.view_hit_blocks;  // shared prefix blocks it will hold
      if (lim_.prefix_caching) need_blocks += cache_.pool().unreferenced_among(r.hashes, r.view_hit_blocks);
    }
    const uint32_t want = cache_.blocks_for(computed + e.num_tokens);
    if (want > have) need_blocks += want - have;
  }
  if (tokens > lim_.max_batch_tokens)
    return "plan carries " + std::to_string(tokens) + " tokens, over the budget of " +
           std::to_string(lim_.max_batch_tokens);
  if (seqs > lim_.max_seqs)
    return "plan runs " + std::to_string(seqs) + " sequences, over max_seqs " + std::to_string(lim_.max_seqs);
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
  std::vector<const Request*> keep(running_.begin(), running_.end());
  auto need = [&](const Request* r, uint32_t n) {
    return int64_t(cache_.blocks_for(r->num_computed + n)) - int64_t(r->blocks.size());
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
    const uint32_t n = std::min(r->known_tokens() - r->num_computed, budget);
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

StepStats Engine::step() {
  StepStats st;
  std::vector<sy_sched_request> wv, rv;
  const uint32_t bs = cache_.block_size();
  for (Request* r : waiting_) {
    r->view_hit_blocks = 0;
    if (lim_.prefix_caching) {
      update_hashes(*r);
      // At least one token is always computed, so its logits exist.
      r->view_hit_blocks = cache_.pool().match(r->hashes, (r->known_tokens() - 1) / bs);
    }
    wv.push_back(view_of(*r));
    wv.back().prefix_hit_len = r->view_hit_blocks * bs;
  }
  for (const Request* r : running_) rv.push_back(view_of(*r));
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
  view.state_slots_free = static_cast<uint32_t>(free_state_slots_.size());

  entries_.assign(waiting_.size() + running_.size() + 1, sy_sched_entry{});
  preempt_.assign(running_.size() + 1, 0);
  sy_sched_plan plan{};
  plan.struct_size = sizeof(plan);
  plan.entries_capacity = static_cast<uint32_t>(entries_.size());
  plan.entries = entries_.data();
  plan.preempt_capacity = static_cast<uint32_t>(preempt_.size());
  plan.preempt = preempt_.data();
  std::string error;
  if (sched_.plan(view, plan, error) != SY_OK) {
    error = "plan failed: " + error;
  } else {
    error = validate(plan);
  }
  if (!error.empty()) {
    ++invalid_plans_;
    st.plan_rejected = true;
    host_counter_add("scheduler_invalid_plans", 1);
    logger()->error("scheduler {}: {}; running the host's fallback plan for this step",
                    sched_.name(), error);
    fallback_plan(plan);
  }

  for (uint32_t i = 0; i < plan.n_preempt; ++i) preempt(*all_.at(plan.preempt[i]));
  std::vector<model::SeqInput> inputs;
  std::vector<Request*> members;
  std::vector<std::vector<int32_t>> chunks;
  chunks.reserve(plan.n_entries);
  const int64_t t0 = now_ns();
  // Admissions take their cached prefix blocks before anyone allocates, so no allocation can
  // evict a block this step is about to share.
  for (uint32_t i = 0; i < plan.n_entries; ++i) {
    Request& r = *all_.at(plan.entries[i].id);
    if (!r.running) admit(r, t0);
  }
  sy_step_shape shape{sizeof(sy_step_shape), 0, 0, 0, 0};
  for (uint32_t i = 0; i < plan.n_entries; ++i) {
    Request& r = *all_.at(plan.entries[i].id);
    const uint32_t n = plan.entries[i].num_tokens;
    const uint32_t want = cache_.blocks_for(r.num_computed + n);
    if (want > r.blocks.size() && !cache_.pool().allocate(want - r.blocks.size(), r.blocks))
      throw std::logic_error("validated plan ran out of KV blocks");
    std::vector<int32_t> toks(n);
    for (uint32_t j = 0; j < n; ++j) toks[j] = r.token_at(r.num_computed + j);
    chunks.push_back(std::move(toks));
    model::SeqInput in;
    in.tokens = chunks.back().data();
    in.n_tokens = n;
    in.pos0 = r.num_computed;
    in.blocks = &r.blocks;
    in.want_logits = r.num_computed + n == r.known_tokens();
    in.state_slot = r.state_slot;
    inputs.push_back(in);
    members.push_back(&r);
    st.n_tokens += n;
    if (r.num_computed + n > r.spec.prompt.size() && n == 1) ++st.n_decode;
    else st.n_prefill_tokens += n;
    shape.kv_ctx_tokens += r.num_computed + n;
  }
  peak_blocks_ = std::max(peak_blocks_, cache_.pool().total() - cache_.pool().free_count());
  // Peak memory per triage path: the KV blocks its running requests hold plus one recurrent
  // state each (shared prefix blocks count for every holder).
  std::map<uint32_t, uint64_t> path_bytes;
  for (const Request* r : running_)
    path_bytes[r->spec.path] +=
        r->blocks.size() * cache_.bytes_per_block() + model_.info().state_bytes_per_seq;
  for (const auto& [path, bytes] : path_bytes)
    peak_path_bytes_[path] = std::max(peak_path_bytes_[path], bytes);
  shape.n_prefill_tokens = st.n_prefill_tokens;
  shape.n_decode_seqs = st.n_decode;
  st.n_seqs = static_cast<uint32_t>(inputs.size());
  if (inputs.empty()) {
    st.wait_ns = plan.wait_ns;
    return st;
  }
  const std::vector<float> logits = model_.forward(inputs, cache_);
  const int64_t now = now_ns();
  cost_.observe(shape, now - t0);
  const uint32_t V = model_.info().n_vocab;
  size_t row = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    Request& r = *members[i];
    r.num_computed += inputs[i].n_tokens;
    publish_blocks(r);
    if (!inputs[i].want_logits) continue;
    const int32_t tok = r.sampler.sample(logits.data() + row++ * V, static_cast<int32_t>(V));
    r.output.push_back(tok);
    r.token_ns.push_back(now);
    if (on_token) on_token(r, tok);
    if (r.spec.stop_at_eos && tok == lim_.eos) finish(r, FinishReason::stop, now);
    else if (r.output.size() >= r.spec.max_new_tokens) finish(r, FinishReason::length, now);
    else if (r.known_tokens() >= lim_.max_context) finish(r, FinishReason::context, now);
  }
  return st;
}

void Engine::run_until_idle() {
  while (!idle()) {
    const StepStats st = step();
    if (st.n_seqs == 0) {
      // Offline: every request is already queued, so waiting only lets the window expire.
      const int64_t wait = std::clamp<int64_t>(st.wait_ns, 0, 50'000'000);
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    }
  }
}

}  // namespace sy::engine
