/* A scheduler plugin that plans FCFS (fcfs_plan.h) but, on chosen calls, breaks one rule of the
 * plan contract, so tests can watch the host catch each kind of fault and keep serving.
 * Parameters:
 *   fault      none | unknown_id | over_budget | twice | preempt_waiting | plan_error | crash |
 *              hang
 *   from_call  first faulty plan call, counting from 1 (default 1)
 *   every      then every this many calls; 0 (default) for that call only
 *   probe_cost 1: each call asks the view's cost model about a fixed step shape (7 prefill
 *              tokens, 3 decoding sequences, 100 cached tokens) and adds the answer to the
 *              host counter bad_plan_cost_ns
 * Host counters: bad_plan_calls (every plan call), bad_plan_faults (faults injected). A crash
 * or a hang counts nothing: the process is gone or stuck. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcfs_plan.h"
#include "switchyard/abi/plugin.h"

enum fault { NONE, UNKNOWN_ID, OVER_BUDGET, TWICE, PREEMPT_WAITING, PLAN_ERROR, CRASH, HANG };
static const char* const kFaults[] = {
    "none", "unknown_id", "over_budget", "twice", "preempt_waiting", "plan_error", "crash", "hang"};

typedef struct bad_sched {
  enum fault fault;
  unsigned long from_call, every, calls, probe_cost;
  char error[128];
} bad_sched;

static const sy_host_api* g_host;
static char g_create_error[256];

static void count(const char* name) {
  if (g_host && g_host->counter_add) g_host->counter_add(name, 1);
}

static int parse_ulong(const char* text, unsigned long* out) {
  char* end = NULL;
  if (!text || !*text || *text == '-') return 0;
  *out = strtoul(text, &end, 10);
  return *end == 0;
}

static sy_status create(const sy_param* params, size_t n, sy_sched_t* out) {
  bad_sched* s = (bad_sched*)calloc(1, sizeof *s);
  size_t i;
  unsigned k;
  if (!s) return SY_ERR_OUT_OF_MEMORY;
  s->from_call = 1;
  for (i = 0; i < n; ++i) {
    const char* key = params[i].key;
    const char* value = params[i].value;
    int ok = 0;
    if (!strcmp(key, "fault")) {
      for (k = 0; k < sizeof kFaults / sizeof kFaults[0]; ++k)
        if (!strcmp(value, kFaults[k])) {
          s->fault = (enum fault)k;
          ok = 1;
        }
    } else if (!strcmp(key, "from_call")) {
      ok = parse_ulong(value, &s->from_call) && s->from_call >= 1;
    } else if (!strcmp(key, "every")) {
      ok = parse_ulong(value, &s->every);
    } else if (!strcmp(key, "probe_cost")) {
      ok = parse_ulong(value, &s->probe_cost);
    }
    if (!ok) {
      snprintf(g_create_error, sizeof g_create_error, "bad_plan: bad parameter %s = '%s'", key,
               value);
      free(s);
      return SY_ERR_INVALID_ARG;
    }
  }
  *out = (sy_sched_t)s;
  return SY_OK;
}

static void destroy(sy_sched_t h) {
  free(h);
}

static const char* last_error(sy_sched_t h) {
  return h ? ((bad_sched*)h)->error : g_create_error;
}

static int faulty_call(const bad_sched* s) {
  if (s->fault == NONE || s->calls < s->from_call) return 0;
  if (s->calls == s->from_call) return 1;
  return s->every > 0 && (s->calls - s->from_call) % s->every == 0;
}

static void add_entry(sy_sched_plan* p, uint64_t id, uint32_t n) {
  p->entries[p->n_entries].id = id;
  p->entries[p->n_entries].num_tokens = n;
  p->entries[p->n_entries].reserved0 = 0;
  ++p->n_entries;
}

/* Everything at once: every request's remaining tokens, ignoring the token budget. */
static uint64_t plan_everything(const sy_sched_view* v, sy_sched_plan* p) {
  uint64_t total = 0;
  uint32_t i;
  p->n_entries = 0;
  for (i = 0; i < v->n_running && p->n_entries < p->entries_capacity; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->running, i);
    add_entry(p, r->id, fcfs_remaining(r));
    total += fcfs_remaining(r);
  }
  for (i = 0; i < v->n_waiting && p->n_entries < p->entries_capacity; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->waiting, i);
    add_entry(p, r->id, fcfs_remaining(r));
    total += fcfs_remaining(r);
  }
  return total;
}

static void probe_cost(const sy_sched_view* v) {
  sy_step_shape shape = {sizeof(sy_step_shape), 7, 3, 0, 100};
  if (v->struct_size < offsetof(sy_sched_view, cost_ctx) + sizeof(void*) || !v->estimate_step_ns)
    return;
  if (g_host && g_host->counter_add)
    g_host->counter_add("bad_plan_cost_ns", (double)v->estimate_step_ns(v->cost_ctx, &shape));
}

static sy_status plan(sy_sched_t h, const sy_sched_view* v, sy_sched_plan* p) {
  bad_sched* s = (bad_sched*)h;
  int injected = 0;
  ++s->calls;
  count("bad_plan_calls");
  if (s->probe_cost) probe_cost(v);
  fcfs_plan(v, p);
  if (!faulty_call(s)) return SY_OK;
  switch (s->fault) {
    case UNKNOWN_ID:
      if (p->n_entries < p->entries_capacity) {
        add_entry(p, 999999, 1);
        injected = 1;
      }
      break;
    case TWICE:
      if (p->n_entries >= 1 && p->n_entries < p->entries_capacity) {
        add_entry(p, p->entries[0].id, p->entries[0].num_tokens);
        injected = 1;
      }
      break;
    case OVER_BUDGET:
      injected = plan_everything(v, p) > v->max_batch_tokens;
      if (!injected) fcfs_plan(v, p);
      break;
    case PREEMPT_WAITING:
      if (v->n_waiting >= 1 && p->preempt_capacity >= 1) {
        p->preempt[0] = SY_SCHED_REQUEST_AT(v, v->waiting, v->n_waiting - 1)->id;
        p->n_preempt = 1;
        injected = 1;
      }
      break;
    case PLAN_ERROR:
      count("bad_plan_faults");
      snprintf(s->error, sizeof s->error, "bad_plan: injected failure on call %lu", s->calls);
      return SY_ERR_INTERNAL;
    case CRASH: {
      volatile int* volatile nowhere = NULL;
      *nowhere = 1;
      break;
    }
    case HANG:
      for (;;) {
        struct timespec t = {1, 0};
        nanosleep(&t, NULL);
      }
    case NONE:
      break;
  }
  if (injected) count("bad_plan_faults");
  return SY_OK;
}

static const sy_scheduler_iface kIface = {
    sizeof(sy_scheduler_iface), 0, create, destroy, last_error, plan};

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  const uint32_t host_minor = SY_VERSION_MINOR(host_abi_version);
  if (SY_VERSION_MAJOR(host_abi_version) != SY_ABI_VERSION_MAJOR) return SY_ERR_VERSION;
  g_host = host;
  info->abi_version = SY_MAKE_VERSION(
      SY_ABI_VERSION_MAJOR, host_minor < SY_ABI_VERSION_MINOR ? host_minor : SY_ABI_VERSION_MINOR);
  info->kind = SY_PLUGIN_SCHEDULER;
  info->name = "bad_plan";
  info->version = "0.0.1";
  info->description = "FCFS that breaks the plan contract on chosen calls";
  info->capabilities = SY_CAP_CHUNKED_PREFILL;
  info->iface = &kIface;
  info->shutdown = NULL;
  return SY_OK;
}
