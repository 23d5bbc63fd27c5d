/* The sample's own test: loads the built plugin the way the host does (dlopen, the entry
 * handshake) and checks its plans on hand-made views. No Switchyard host is needed.
 * Usage: test_sjf path/to/switchyard_scheduler_sjf.so */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "switchyard/abi/plugin.h"

static int g_failures;

#define CHECK(cond, ...)                              \
  do {                                                \
    if (!(cond)) {                                    \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                   \
      fputc('\n', stderr);                            \
      ++g_failures;                                   \
    }                                                 \
  } while (0)

static sy_sched_request request(uint64_t id, uint32_t prompt, uint32_t max_new, int64_t arrival) {
  sy_sched_request r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  r.id = id;
  r.prompt_len = prompt;
  r.max_new_tokens = max_new;
  r.arrival_ns = arrival;
  return r;
}

static sy_sched_view view(const sy_sched_request* waiting, uint32_t n_waiting,
                          const sy_sched_request* running, uint32_t n_running, uint32_t budget) {
  sy_sched_view v;
  memset(&v, 0, sizeof v);
  v.struct_size = sizeof v;
  v.request_size = sizeof(sy_sched_request);
  v.waiting = waiting;
  v.n_waiting = n_waiting;
  v.running = running;
  v.n_running = n_running;
  v.kv_block_size = 16;
  v.kv_total_blocks = v.kv_free_blocks = 64;
  v.max_context = 1024;
  v.max_batch_tokens = budget;
  v.max_seqs = 8;
  return v;
}

/* Plans and checks the (id, tokens) pairs of the result. */
static void expect_plan(const sy_scheduler_iface* api, sy_sched_t s, const sy_sched_view* v,
                        const uint64_t* ids, const uint32_t* tokens, uint32_t n, const char* what) {
  sy_sched_entry entries[8];
  uint64_t preempt[8];
  sy_sched_plan p;
  uint32_t i;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.entries = entries;
  p.entries_capacity = 8;
  p.preempt = preempt;
  p.preempt_capacity = 8;
  CHECK(api->plan(s, v, &p) == SY_OK, "%s: plan failed: %s", what, api->last_error(s));
  CHECK(p.n_entries == n, "%s: %u entries, expected %u", what, p.n_entries, n);
  CHECK(p.n_preempt == 0, "%s: preempts %u", what, p.n_preempt);
  for (i = 0; i < n && i < p.n_entries; ++i)
    CHECK(entries[i].id == ids[i] && entries[i].num_tokens == tokens[i],
          "%s: entry %u is (%llu, %u), expected (%llu, %u)", what, i,
          (unsigned long long)entries[i].id, entries[i].num_tokens, (unsigned long long)ids[i],
          tokens[i]);
}

int main(int argc, char** argv) {
  void* lib;
  void* sym;
  sy_plugin_entry_fn entry;
  sy_plugin_info info;
  char error[256] = "";
  const sy_scheduler_iface* api;
  sy_sched_t s = NULL;
  sy_param bogus = {"aging_ms", "5"};
  if (argc != 2) {
    fprintf(stderr, "usage: test_sjf PLUGIN.so\n");
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  sym = lib ? dlsym(lib, SY_PLUGIN_ENTRY_SYMBOL) : NULL;
  if (!sym) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  memcpy(&entry, &sym, sizeof entry);

  /* The handshake: an older host gets the plugin negotiated down to its minor. */
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.error_buf = error;
  info.error_buf_size = sizeof error;
  CHECK(entry(SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0), NULL, &info) == SY_OK, "entry: %s", error);
  CHECK(info.abi_version == SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0), "negotiated 0x%x",
        info.abi_version);
  CHECK(entry(SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR + 1, 0), NULL, &info) == SY_ERR_VERSION,
        "accepted another major");
  CHECK(entry(SY_ABI_VERSION, NULL, &info) == SY_OK, "entry: %s", error);
  CHECK(info.kind == SY_PLUGIN_SCHEDULER && !strcmp(info.name, "sjf"), "kind %u name %s", info.kind,
        info.name);
  CHECK(info.capabilities == SY_CAP_CHUNKED_PREFILL, "capabilities 0x%llx",
        (unsigned long long)info.capabilities);
  api = (const sy_scheduler_iface*)info.iface;

  CHECK(api->create(&bogus, 1, &s) == SY_ERR_INVALID_ARG, "accepted a parameter");
  CHECK(!strcmp(api->last_error(NULL), "sjf: unknown parameter 'aging_ms' (it has none)"), "%s",
        api->last_error(NULL));
  CHECK(api->create(NULL, 0, &s) == SY_OK, "create: %s", api->last_error(NULL));

  {
    /* Jobs of 34, 9 and 16 tokens arriving in that order run shortest first. */
    const sy_sched_request waiting[3] = {request(1, 30, 4, 10), request(2, 5, 4, 20),
                                         request(3, 12, 4, 30)};
    const uint64_t ids[3] = {2, 3, 1};
    const uint32_t tokens[3] = {5, 12, 30};
    const sy_sched_view v = view(waiting, 3, NULL, 0, 512);
    expect_plan(api, s, &v, ids, tokens, 3, "shortest first");
  }
  {
    /* Equal jobs: the earlier arrival first. A 20-token budget chunks the second prompt. */
    const sy_sched_request waiting[2] = {request(7, 12, 4, 50), request(8, 12, 4, 40)};
    const uint64_t ids[2] = {8, 7};
    const uint32_t tokens[2] = {12, 8};
    const sy_sched_view v = view(waiting, 2, NULL, 0, 20);
    expect_plan(api, s, &v, ids, tokens, 2, "ties and chunks");
  }
  {
    /* Running requests go first; a job whose context does not fit in the free blocks waits. */
    sy_sched_request running = request(1, 40, 8, 0);
    const sy_sched_request waiting[2] = {request(2, 900, 100, 5), request(3, 10, 2, 6)};
    const uint64_t ids[2] = {1, 3};
    const uint32_t tokens[2] = {1, 10};
    sy_sched_view v;
    running.state = SY_REQ_RUNNING;
    running.num_computed = 41;
    running.num_generated = 2; /* next: decode one token */
    v = view(waiting, 2, &running, 1, 512);
    v.kv_free_blocks = 40; /* request 2 needs 63 */
    expect_plan(api, s, &v, ids, tokens, 2, "running first, then what fits");
  }
  api->destroy(s);
  if (g_failures == 0) printf("sjf: all checks passed\n");
  return g_failures == 0 ? 0 : 1;
}
