/* A scheduler plugin built against the frozen ABI 1.0 headers only (tests/abi_fixtures/v1.0):
 * a 1.1 host must load it and get correct plans from it. Its view is a 1.1 view; it reads only
 * the 1.0 members, as any plugin compiled a minor ago would. */
#include <stdio.h>
#include <stdlib.h>

#include "fcfs_plan.h"
#include "switchyard/abi/plugin.h"

#if SY_ABI_VERSION_MINOR != 0
#error "this fixture must be compiled against the ABI 1.0 headers"
#endif

typedef struct v10_sched {
  char error[128];
} v10_sched;

static char g_create_error[128];

static sy_status create(const sy_param* params, size_t n, sy_sched_t* out) {
  v10_sched* s;
  if (n > 0) {
    snprintf(g_create_error, sizeof g_create_error, "v1_0_fcfs: unknown parameter '%s'",
             params[0].key);
    return SY_ERR_INVALID_ARG;
  }
  s = (v10_sched*)calloc(1, sizeof *s);
  if (!s) return SY_ERR_OUT_OF_MEMORY;
  *out = (sy_sched_t)s;
  return SY_OK;
}

static void destroy(sy_sched_t h) {
  free(h);
}

static const char* last_error(sy_sched_t h) {
  return h ? ((v10_sched*)h)->error : g_create_error;
}

static sy_status plan(sy_sched_t h, const sy_sched_view* v, sy_sched_plan* p) {
  v10_sched* s = (v10_sched*)h;
  if (v->struct_size < sizeof *v || v->request_size < sizeof(sy_sched_request)) {
    snprintf(s->error, sizeof s->error, "v1_0_fcfs: view of %u bytes is smaller than ABI 1.0's",
             v->struct_size);
    return SY_ERR_VERSION;
  }
  fcfs_plan(v, p);
  return SY_OK;
}

static const sy_scheduler_iface kIface = {
    sizeof(sy_scheduler_iface), 0, create, destroy, last_error, plan};

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host;
  if (SY_VERSION_MAJOR(host_abi_version) != SY_ABI_VERSION_MAJOR) return SY_ERR_VERSION;
  info->abi_version = SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0); /* min(host minor, 0) */
  info->kind = SY_PLUGIN_SCHEDULER;
  info->name = "v1_0_fcfs";
  info->version = "1.0.0";
  info->description = "FCFS built against the ABI 1.0 headers";
  info->capabilities = SY_CAP_CHUNKED_PREFILL;
  info->iface = &kIface;
  info->shutdown = NULL;
  return SY_OK;
}
