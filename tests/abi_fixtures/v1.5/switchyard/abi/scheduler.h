/* Switchyard scheduler interface: what a scheduler plugin implements.
 *
 * Each engine step the host hands the scheduler a read-only view of the queue and the cache and
 * the scheduler fills a plan: which requests run this step and how many of their tokens (a prompt
 * chunk or one decode token), which running requests to preempt, and how long the host may wait
 * before asking again when it decided to run nothing. Schedulers never touch tensors, so a plan
 * is a pure function of the view and the scheduler's own state, testable without a model.
 *
 * Thread contract: calls on one sy_sched_t are serialised by the host.
 * Ownership: the view and everything it points to are borrowed for the call; the plan's arrays
 * belong to the host, which sets their capacities; the scheduler writes the counts. */
#ifndef SWITCHYARD_ABI_SCHEDULER_H
#define SWITCHYARD_ABI_SCHEDULER_H

#include "switchyard/abi/backend.h"
#include "switchyard/abi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_sched_s* sy_sched_t;

typedef enum sy_request_state {
  SY_REQ_WAITING = 0, /* never scheduled, or preempted and waiting to be recomputed */
  SY_REQ_RUNNING = 1, /* holds KV blocks; prefill or decode in progress */
  SY_REQ_STATE_FORCE_32BIT = 0x7fffffff
} sy_request_state;

/* One request as the scheduler sees it. Arrays of these are read with the view's request_size as
 * stride (use SY_SCHED_REQUEST_AT), so fields appended later do not break older plugins. */
typedef struct sy_sched_request {
  uint32_t struct_size;
  uint32_t state; /* sy_request_state */
  uint64_t id;
  int64_t arrival_ns; /* host clock (sy_host_api.now_ns) */
  int32_t priority;   /* larger runs first */
  uint32_t prompt_len;
  uint32_t max_new_tokens;
  uint32_t num_computed; /* tokens whose keys are in the cache (prompt + generated) */
  uint32_t num_generated;
  uint32_t num_preemptions;
  uint32_t prefix_hit_len; /* prompt tokens already cached (prefix cache), 0 without one */
  uint32_t path;           /* triage path tag: 0 = full */

  /* ---- since 1.3 (read only when the view's request_size covers them) ---- */
  /* Waiting requests: prompt tokens past prefix_hit_len that a running request is still
   * prefilling (the same leading KV blocks); they are cached as it computes them, so admitting
   * this request a few steps later saves recomputing them. 0 when none. */
  uint32_t prefix_pending_len;
  uint32_t reserved13; /* zero: the explicit padding of the 1.3 block */
} sy_sched_request;

typedef struct sy_sched_view {
  uint32_t struct_size;
  uint32_t request_size; /* stride of the request arrays */
  int64_t now_ns;
  const sy_sched_request* waiting; /* in arrival order */
  uint32_t n_waiting;
  uint32_t n_running;
  const sy_sched_request* running; /* in admission order */
  uint32_t kv_block_size;
  uint32_t kv_total_blocks;
  uint32_t kv_free_blocks;
  uint32_t max_context;      /* the model's context length */
  uint32_t max_batch_tokens; /* tokens one step may carry (sum of num_tokens) */
  uint32_t max_seqs;         /* requests that may hold KV blocks at once */

  /* ---- since 1.1 (read only when struct_size covers them) ---- */
  /* The backend's cost model: estimated nanoseconds for a step of this shape. NULL if none. */
  int64_t (*estimate_step_ns)(void* cost_ctx, const sy_step_shape* shape);
  void* cost_ctx;
  uint32_t kv_cached_free_blocks; /* free blocks that still hold reusable prefix-cache content */
  uint32_t prefix_caching;        /* 1: the host keeps a prefix cache; prefix_hit_len is live */
  /* Recurrent-state budget (models with SSM layers; both 0 otherwise): fixed-size per-request
   * state slots, one taken at admission and returned on finish or preemption. */
  uint32_t state_slots_total;
  uint32_t state_slots_free;

  /* ---- since 1.3 ---- */
  /* The engine's context for sy_host_api.counter_add_to: counters added with it belong to the
   * engine that planned with this view. Valid for the plan() call; pass it back, never deref. */
  void* host_ctx;
  /* Hybrid prefix caching (prefix caching on a model with recurrent layers): the host keeps
   * snapshots of the recurrent state at KV-block boundaries of cached prefixes, in slots of their
   * own beyond the running requests' state_slots_total. state_slots_snapshots: that budget (0
   * without hybrid prefix caching); state_slots_cached: how many hold a snapshot now. A hit
   * (prefix_hit_len) restores one into the request's slot; snapshots are evicted LRU, and with
   * the KV blocks they extend. */
  uint32_t state_slots_snapshots;
  uint32_t state_slots_cached;
} sy_sched_view;

#define SY_SCHED_VIEW_SIZE_1_0 offsetof(sy_sched_view, estimate_step_ns)

#define SY_SCHED_REQUEST_AT(view, array, i) \
  ((const sy_sched_request*)((const char*)(array) + (size_t)(i) * (view)->request_size))

typedef struct sy_sched_entry {
  uint64_t id;
  uint32_t num_tokens; /* prompt tokens to prefill this step, or 1 for a decode step */
  uint32_t reserved0;
} sy_sched_entry;

typedef struct sy_sched_plan {
  uint32_t struct_size;
  uint32_t entries_capacity; /* set by the host */
  sy_sched_entry* entries;
  uint32_t n_entries; /* set by the scheduler */
  uint32_t preempt_capacity;
  uint64_t* preempt; /* ids of running requests whose blocks are freed (recomputed later) */
  uint32_t n_preempt;
  uint32_t reserved0;
  /* When the plan runs nothing: how long the host may sleep before the next call unless a new
   * request arrives first. Ignored when entries are planned. */
  int64_t wait_ns;
} sy_sched_plan;

typedef struct sy_scheduler_iface {
  uint32_t struct_size;
  uint32_t reserved0;
  /* ---- since 1.0 ---- */
  sy_status (*create)(const sy_param* params, size_t n_params, sy_sched_t* out);
  void (*destroy)(sy_sched_t sched);
  /* Message of the last failed call on `sched` (NULL: of the last failed create). */
  const char* (*last_error)(sy_sched_t sched);
  sy_status (*plan)(sy_sched_t sched, const sy_sched_view* view, sy_sched_plan* plan);
} sy_scheduler_iface;

#ifdef __cplusplus
}
#endif
#endif
