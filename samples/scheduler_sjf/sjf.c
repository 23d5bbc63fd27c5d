/* Shortest job first: a Switchyard scheduler plugin.
 *
 * Each step, requests already running continue (a prompt chunk or one decode token), so a
 * request once admitted is never starved or preempted. Then waiting requests are admitted
 * shortest job first, the job being the tokens a request still has to compute: its prompt plus
 * the tokens it may generate. Ties go to the earlier arrival. A request is admitted only while
 * its whole context fits in the KV blocks running requests have not claimed (the ones behind it
 * are longer and would not fit either). A prompt longer than the step's token budget is
 * prefilled in chunks.
 *
 * Parameters: none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchyard/abi/plugin.h"

typedef struct sjf {
  const sy_sched_request** order; /* waiting requests, shortest first */
  uint32_t capacity;
  char error[160];
} sjf;

static char g_create_error[160];

static sy_status create(const sy_param* params, size_t n, sy_sched_t* out) {
  sjf* s;
  if (n > 0) {
    snprintf(g_create_error, sizeof g_create_error, "sjf: unknown parameter '%s' (it has none)",
             params[0].key);
    return SY_ERR_INVALID_ARG;
  }
  s = (sjf*)calloc(1, sizeof *s);
  if (!s) return SY_ERR_OUT_OF_MEMORY;
  *out = (sy_sched_t)s;
  return SY_OK;
}

static void destroy(sy_sched_t h) {
  sjf* s = (sjf*)h;
  free(s->order);
  free(s);
}

static const char* last_error(sy_sched_t h) {
  return h ? ((sjf*)h)->error : g_create_error;
}

static uint32_t blocks(uint32_t tokens, uint32_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

/* Tokens still to compute before the next sample (prompt, or recomputation after preemption). */
static uint32_t pending(const sy_sched_request* r) {
  return r->prompt_len + r->num_generated - r->num_computed;
}

/* The job: every token still to compute, generated ones included. */
static uint64_t job(const sy_sched_request* r) {
  return (uint64_t)r->prompt_len + r->max_new_tokens - r->num_computed;
}

static int shorter_first(const void* a, const void* b) {
  const sy_sched_request* x = *(const sy_sched_request* const*)a;
  const sy_sched_request* y = *(const sy_sched_request* const*)b;
  if (job(x) != job(y)) return job(x) < job(y) ? -1 : 1;
  if (x->arrival_ns != y->arrival_ns) return x->arrival_ns < y->arrival_ns ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static void add(sy_sched_plan* p, uint64_t id, uint32_t n) {
  p->entries[p->n_entries].id = id;
  p->entries[p->n_entries].num_tokens = n;
  p->entries[p->n_entries].reserved0 = 0;
  ++p->n_entries;
}

static sy_status plan(sy_sched_t h, const sy_sched_view* v, sy_sched_plan* p) {
  sjf* s = (sjf*)h;
  uint32_t budget = v->max_batch_tokens, seqs = v->n_running, i;
  int64_t free_blocks = v->kv_free_blocks;
  p->n_entries = 0;
  p->n_preempt = 0;
  p->wait_ns = 0;

  for (i = 0; i < v->n_running; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->running, i);
    const uint32_t n = pending(r) < budget ? pending(r) : budget;
    /* Keep the rest of its context free for it. */
    free_blocks -= (int64_t)blocks(r->prompt_len + r->max_new_tokens, v->kv_block_size) -
                   (int64_t)blocks(r->num_computed, v->kv_block_size);
    if (n == 0 || p->n_entries >= p->entries_capacity) continue;
    add(p, r->id, n);
    budget -= n;
  }

  if (v->n_waiting > s->capacity) {
    const sy_sched_request** grown =
        (const sy_sched_request**)realloc(s->order, v->n_waiting * sizeof *grown);
    if (!grown) {
      snprintf(s->error, sizeof s->error, "sjf: out of memory sorting %u requests", v->n_waiting);
      return SY_ERR_OUT_OF_MEMORY;
    }
    s->order = grown;
    s->capacity = v->n_waiting;
  }
  for (i = 0; i < v->n_waiting; ++i) s->order[i] = SY_SCHED_REQUEST_AT(v, v->waiting, i);
  if (v->n_waiting > 1) qsort(s->order, v->n_waiting, sizeof *s->order, shorter_first);

  for (i = 0; i < v->n_waiting; ++i) {
    const sy_sched_request* r = s->order[i];
    const int64_t need = blocks(r->prompt_len + r->max_new_tokens, v->kv_block_size);
    const uint32_t n = pending(r) < budget ? pending(r) : budget;
    if (n == 0 || need > free_blocks || seqs >= v->max_seqs || p->n_entries >= p->entries_capacity)
      break;
    free_blocks -= need;
    ++seqs;
    add(p, r->id, n);
    budget -= n;
  }
  /* Nothing to run: with no one waiting, sleep until a request arrives (the host wakes us);
   * else retry soon, when blocks may have been freed. */
  if (p->n_entries == 0) p->wait_ns = v->n_waiting == 0 ? INT64_MAX : 1000000;
  return SY_OK;
}

static const sy_scheduler_iface kIface = {
    sizeof(sy_scheduler_iface), 0, create, destroy, last_error, plan};

/* What `switchyard plugins` lists and the host checks before loading the file (SDK 1.3). */
SY_PLUGIN_NOTE(SY_PLUGIN_SCHEDULER, "sjf", "1.0.0", SY_CAP_CHUNKED_PREFILL,
               "sample: shortest job first, non-preemptive, chunked prefill");

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  const uint32_t host_minor = SY_VERSION_MINOR(host_abi_version);
  (void)host;
  if (SY_VERSION_MAJOR(host_abi_version) != SY_ABI_VERSION_MAJOR) {
    snprintf(info->error_buf, info->error_buf_size, "sjf implements ABI %u.x, the host %u.%u",
             SY_ABI_VERSION_MAJOR, SY_VERSION_MAJOR(host_abi_version), host_minor);
    return SY_ERR_VERSION;
  }
  /* Negotiate down: the host's minor if it is older than the headers this was built with. */
  info->abi_version = SY_MAKE_VERSION(
      SY_ABI_VERSION_MAJOR, host_minor < SY_ABI_VERSION_MINOR ? host_minor : SY_ABI_VERSION_MINOR);
  info->kind = sy_plugin_note_.kind;
  info->name = sy_plugin_note_.name;
  info->version = sy_plugin_note_.version;
  info->description = sy_plugin_note_.description;
  info->capabilities = sy_plugin_note_.capabilities_lo;
  info->iface = &kIface;
  info->shutdown = NULL;
  return SY_OK;
}
