/* First come, first served, shared by test scheduler plugins. It uses only ABI 1.0 names, so it
 * compiles against the frozen 1.0 headers as well as the current ones. Running requests continue
 * (a prompt chunk or one decode token); waiting ones are admitted in arrival order while their
 * whole context fits in the KV blocks that running requests have not yet claimed. */
#ifndef SY_TEST_FCFS_PLAN_H
#define SY_TEST_FCFS_PLAN_H

#include <stdint.h>

#include "switchyard/abi/scheduler.h"

static uint32_t fcfs_blocks(uint32_t tokens, uint32_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

static uint32_t fcfs_remaining(const sy_sched_request* r) {
  return r->prompt_len + r->num_generated - r->num_computed;
}

static void fcfs_plan(const sy_sched_view* v, sy_sched_plan* p) {
  uint32_t budget = v->max_batch_tokens, i;
  int64_t free_blocks = v->kv_free_blocks;
  p->n_entries = 0;
  p->n_preempt = 0;
  p->wait_ns = 0;
  for (i = 0; i < v->n_running; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->running, i);
    const uint32_t left = fcfs_remaining(r);
    const uint32_t n = left < budget ? left : budget;
    free_blocks -= (int64_t)fcfs_blocks(r->prompt_len + r->max_new_tokens, v->kv_block_size) -
                   (int64_t)fcfs_blocks(r->num_computed, v->kv_block_size);
    if (n == 0 || p->n_entries >= p->entries_capacity) continue;
    p->entries[p->n_entries].id = r->id;
    p->entries[p->n_entries].num_tokens = n;
    p->entries[p->n_entries].reserved0 = 0;
    ++p->n_entries;
    budget -= n;
  }
  for (i = 0; i < v->n_waiting; ++i) {
    const sy_sched_request* r = SY_SCHED_REQUEST_AT(v, v->waiting, i);
    const int64_t need = fcfs_blocks(r->prompt_len + r->max_new_tokens, v->kv_block_size);
    const uint32_t left = fcfs_remaining(r);
    const uint32_t n = left < budget ? left : budget;
    if (n == 0 || v->n_running + i >= v->max_seqs || need > free_blocks ||
        p->n_entries >= p->entries_capacity)
      break;
    free_blocks -= need;
    p->entries[p->n_entries].id = r->id;
    p->entries[p->n_entries].num_tokens = n;
    p->entries[p->n_entries].reserved0 = 0;
    ++p->n_entries;
    budget -= n;
  }
}

#endif
