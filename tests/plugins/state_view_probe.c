/* A scheduler that checks the view's recurrent-state budget every step: state_slots_free must
 * equal state_slots_total minus the running requests (one slot each), and (ABI 1.3) no more
 * snapshots may be cached than their budget. It reports through host counters (probe.steps,
 * probe.slots_total, probe.slot_mismatch, probe.snapshot_slots), through the engine's own
 * context (counter_add_to with view->host_ctx) where host and view have it, and schedules FCFS:
 * running requests continue, waiting ones are admitted while their whole context fits.
 * Builds against the frozen 1.2 headers too (tests/abi.cmake): then only counter_add. */
#include <stddef.h>

#include "switchyard/abi/plugin.h"

static const sy_host_api* g_host;

static sy_status create(const sy_param* params, size_t n, sy_sched_t* out) {
  (void)params;
  (void)n;
  *out = (sy_sched_t)&g_host; /* stateless: any non-NULL handle */
  return SY_OK;
}
static void destroy(sy_sched_t s) {
  (void)s;
}
static const char* last_error(sy_sched_t s) {
  (void)s;
  return "";
}

/* The planning engine's own counter where host and view have the 1.3 context. */
static void count(const sy_sched_view* v, const char* name, double delta) {
#if SY_ABI_VERSION_MINOR >= 3
  if (g_host->struct_size >= offsetof(sy_host_api, counter_add_to) + sizeof(void*) &&
      g_host->counter_add_to && v->struct_size >= offsetof(sy_sched_view, host_ctx) + sizeof(void*)) {
    g_host->counter_add_to(v->host_ctx, name, delta);
    return;
  }
#endif
  (void)v; /* built against headers older than 1.3: the process-wide counter_add */
  g_host->counter_add(name, delta);
}

static sy_status plan(sy_sched_t s, const sy_sched_view* v, sy_sched_plan* p) {
  uint32_t i, budget = v->max_batch_tokens, free_blocks = v->kv_free_blocks, seqs = v->n_running;
  (void)s;
  if (v->struct_size >= offsetof(sy_sched_view, state_slots_free) + sizeof(uint32_t)) {
    const uint32_t want = v->state_slots_total ? v->state_slots_total - v->n_running : 0;
    count(v, "probe.steps", 1);
    count(v, "probe.slots_total", v->state_slots_total);
    if (v->state_slots_free != want) count(v, "probe.slot_mismatch", 1);
  }
#if SY_ABI_VERSION_MINOR >= 3
  if (v->struct_size >= offsetof(sy_sched_view, state_slots_cached) + sizeof(uint32_t)) {
    count(v, "probe.snapshot_slots", v->state_slots_snapshots);
    if (v->state_slots_cached > v->state_slots_snapshots) count(v, "probe.slot_mismatch", 1);
  }
#endif
  p->n_entries = p->n_preempt = 0;
  p->wait_ns = 0;
  for (i = 0; i < v->n_running && budget > 0; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->running, i);
    uint32_t left = r->prompt_len + r->num_generated - r->num_computed;
    if (left > budget) left = budget;
    p->entries[p->n_entries].id = r->id;
    p->entries[p->n_entries].num_tokens = left;
    p->entries[p->n_entries++].reserved0 = 0;
    budget -= left;
  }
  for (i = 0; i < v->n_waiting && budget > 0 && seqs < v->max_seqs; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->waiting, i);
    const uint32_t need =
        (r->prompt_len + r->max_new_tokens + v->kv_block_size - 1) / v->kv_block_size;
    uint32_t n = r->prompt_len + r->num_generated - r->prefix_hit_len; /* after its cached prefix */
    if (need > free_blocks) break;
    if (n > budget) n = budget;
    free_blocks -= need;
    ++seqs;
    p->entries[p->n_entries].id = r->id;
    p->entries[p->n_entries].num_tokens = n;
    p->entries[p->n_entries++].reserved0 = 0;
    budget -= n;
  }
  return SY_OK;
}

static const sy_scheduler_iface kIface = {
    sizeof(sy_scheduler_iface), 0, create, destroy, last_error, plan};

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  if (SY_VERSION_MAJOR(host_abi_version) != SY_ABI_VERSION_MAJOR) return SY_ERR_VERSION;
  g_host = host;
  info->abi_version = SY_ABI_VERSION;
  if (SY_VERSION_MINOR(host_abi_version) < SY_ABI_VERSION_MINOR)
    info->abi_version = host_abi_version;
  info->kind = SY_PLUGIN_SCHEDULER;
  info->name = "state_view_probe";
  info->version = "0.1.0";
  info->description = "test: checks the recurrent-state budget in the scheduler view";
  info->capabilities = 0;
  info->iface = &kIface;
  info->shutdown = NULL;
  return SY_OK;
}
