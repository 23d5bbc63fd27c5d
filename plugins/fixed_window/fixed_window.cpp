// The original scheduler: a fixed batch cap, a fixed wait window and static batches. It waits
// until max_batch requests are queued or the oldest has waited wait_window_ms, admits up to
// max_batch whose whole prompt + max_new_tokens fit in the free KV blocks, and runs that batch
// until every member finishes before it admits anyone else. Predictable, simple, never preempts.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin_entry.h"
#include "plugin_params.h"
#include "switchyard/abi/plugin.h"

namespace {

thread_local std::string g_create_error;

struct FixedWindow {
  uint32_t max_batch = 8;
  int64_t window_ns = 10'000'000;
  std::vector<uint64_t> batch;  // ids of the running static batch
  std::string error;
};

sy_status create(const sy_param* params, size_t n, sy_sched_t* out) {
  auto* s = new (std::nothrow) FixedWindow();
  if (!s) return SY_ERR_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; ++i) {
    const std::string key = params[i].key;
    uint64_t u = 0;
    double d = 0;
    if (key == "max_batch" && sy::plugin::parse_uint(params[i].value, 1, 65536, u)) {
      s->max_batch = static_cast<uint32_t>(u);
    } else if (key == "wait_window_ms" && sy::plugin::parse_double(params[i].value, 0, 1e6, d)) {
      s->window_ns = static_cast<int64_t>(d * 1e6);
    } else {
      g_create_error = (key == "max_batch" || key == "wait_window_ms")
                           ? sy::plugin::bad_value("fixed_window", params[i])
                           : "fixed_window: unknown parameter '" + key +
                                 "' (known: max_batch, wait_window_ms)";
      delete s;
      return SY_ERR_INVALID_ARG;
    }
  }
  *out = reinterpret_cast<sy_sched_t>(s);
  return SY_OK;
}

void destroy(sy_sched_t h) { delete reinterpret_cast<FixedWindow*>(h); }

const char* last_error(sy_sched_t h) {
  return h ? reinterpret_cast<FixedWindow*>(h)->error.c_str() : g_create_error.c_str();
}

uint32_t remaining(const sy_sched_request* r) {
  return r->prompt_len + r->num_generated - r->num_computed;
}

sy_status plan(sy_sched_t h, const sy_sched_view* v, sy_sched_plan* p) {
  auto* s = reinterpret_cast<FixedWindow*>(h);
  p->n_entries = 0;
  p->n_preempt = 0;
  p->wait_ns = 0;
  // Drop finished members: whatever is no longer running.
  std::vector<uint64_t> alive;
  for (uint64_t id : s->batch)
    for (uint32_t i = 0; i < v->n_running; ++i)
      if (SY_SCHED_REQUEST_AT(v, v->running, i)->id == id) alive.push_back(id);
  s->batch.swap(alive);

  uint32_t budget = v->max_batch_tokens;
  auto add = [&](const sy_sched_request* r) {
    const uint32_t n = std::min(remaining(r), budget);
    if (n == 0 || p->n_entries >= p->entries_capacity) return;
    p->entries[p->n_entries++] = sy_sched_entry{r->id, n, 0};
    budget -= n;
  };
  if (!s->batch.empty()) {
    for (uint32_t i = 0; i < v->n_running; ++i) add(SY_SCHED_REQUEST_AT(v, v->running, i));
    return SY_OK;
  }
  if (v->n_waiting == 0) {
    p->wait_ns = INT64_MAX;  // nothing to do until a request arrives
    return SY_OK;
  }
  const int64_t waited = v->now_ns - SY_SCHED_REQUEST_AT(v, v->waiting, 0)->arrival_ns;
  if (v->n_waiting < s->max_batch && waited < s->window_ns) {
    p->wait_ns = s->window_ns - waited;
    return SY_OK;
  }
  // Admit in arrival order, reserving each request's full context so it never runs out.
  uint32_t free_blocks = v->kv_free_blocks;
  const uint32_t cap = std::min(s->max_batch, v->max_seqs);
  for (uint32_t i = 0; i < v->n_waiting && s->batch.size() < cap; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->waiting, i);
    const uint32_t need = (r->prompt_len + r->max_new_tokens + v->kv_block_size - 1) / v->kv_block_size;
    if (need > free_blocks || budget == 0) break;  // FIFO: no overtaking
    free_blocks -= need;
    s->batch.push_back(r->id);
    add(r);
  }
  if (p->n_entries == 0) p->wait_ns = s->window_ns;  // head does not fit yet; retry later
  return SY_OK;
}

const sy_scheduler_iface kIface = {sizeof(sy_scheduler_iface), 0, create, destroy, last_error, plan};

SY_PLUGIN_NOTE(SY_PLUGIN_SCHEDULER, "fixed_window", "0.1.0", 0,
               "original: fixed batch cap, fixed wait window, static batches");

}  // namespace

extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                               sy_plugin_info* info) {
  (void)host;
  if (const sy_status st = sy::plugin::negotiate(host_abi_version, info, "fixed_window")) return st;
  sy::plugin::describe_from_note(info, sy_plugin_note_);
  info->iface = &kIface;
  info->shutdown = nullptr;
  return SY_OK;
}
