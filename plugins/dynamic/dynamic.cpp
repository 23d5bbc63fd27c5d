// The optimized scheduler as a plugin: ABI glue around sy::dynamic::Policy. Every option can be
// switched off from TOML for ablations (chunked_prefill, adaptive, preemption, priority,
// prefix_ordering).
#include <algorithm>
#include <cstdio>
#include <new>
#include <string>

#include "dynamic_policy.h"
#include "plugin_entry.h"
#include "plugin_params.h"
#include "switchyard/abi/plugin.h"

namespace {

const sy_host_api* g_host = nullptr;
thread_local char g_create_error[512];

struct Dynamic {
  explicit Dynamic(sy::dynamic::Options o) : policy(o) {}
  sy::dynamic::Policy policy;
  std::string error;
};

// Every parameter apply() understands: the known-key check and the unknown-key message.
constexpr const char* kParamNames[] = {"chunked_prefill", "adaptive",        "preemption",
                                       "priority",        "prefix_ordering", "max_preemptions",
                                       "max_num_seqs",    "min_budget",      "target_step_ms",
                                       "max_wait_ms",     "aging_ms",        "watermark"};

bool apply(sy::dynamic::Options& o, const sy_param& p) {
  using namespace sy::plugin;
  const std::string k = p.key ? p.key : "";
  uint64_t u = 0;
  double d = 0;
  if (k == "chunked_prefill") return parse_bool(p.value, o.chunked_prefill);
  if (k == "adaptive") return parse_bool(p.value, o.adaptive);
  if (k == "preemption") return parse_bool(p.value, o.preemption);
  if (k == "priority") return parse_bool(p.value, o.priority);
  if (k == "prefix_ordering") return parse_bool(p.value, o.prefix_ordering);
  if (k == "max_preemptions")
    return parse_uint(p.value, 0, 1000, u) && ((o.max_preemptions = u), true);
  if (k == "max_num_seqs")
    return parse_uint(p.value, 0, 1 << 20, u) && ((o.max_num_seqs = u), true);
  if (k == "min_budget") return parse_uint(p.value, 1, 1 << 20, u) && ((o.min_budget = u), true);
  if (k == "target_step_ms")
    return parse_double(p.value, 0.01, 1e6, d) && ((o.target_step_ms = d), true);
  if (k == "max_wait_ms") return parse_double(p.value, 0, 1e6, d) && ((o.max_wait_ms = d), true);
  if (k == "aging_ms") return parse_double(p.value, 0, 1e9, d) && ((o.aging_ms = d), true);
  if (k == "watermark") return parse_double(p.value, 0, 0.5, d) && ((o.watermark = d), true);
  return false;
}

sy_status create(const sy_param* params, size_t n, sy_sched_t* out) {
  sy::dynamic::Options o;
  for (size_t i = 0; i < n; ++i) {
    if (apply(o, params[i])) continue;
    const std::string msg = sy::plugin::is_known(kParamNames, params[i].key)
                                ? sy::plugin::bad_value("dynamic", params[i])
                                : sy::plugin::unknown_param("dynamic", params[i].key, kParamNames);
    std::snprintf(g_create_error, sizeof g_create_error, "%s", msg.c_str());
    return SY_ERR_INVALID_ARG;
  }
  auto* s = new (std::nothrow) Dynamic(o);
  if (!s) return SY_ERR_OUT_OF_MEMORY;
  *out = reinterpret_cast<sy_sched_t>(s);
  return SY_OK;
}

void destroy(sy_sched_t h) {
  delete reinterpret_cast<Dynamic*>(h);
}

const char* last_error(sy_sched_t h) {
  return h ? reinterpret_cast<Dynamic*>(h)->error.c_str() : g_create_error;
}

sy_status plan(sy_sched_t h, const sy_sched_view* v, sy_sched_plan* p) {
  auto* s = reinterpret_cast<Dynamic*>(h);
  if (v->struct_size < SY_SCHED_VIEW_SIZE_1_0 ||
      p->entries_capacity < v->n_running + v->n_waiting || p->preempt_capacity < v->n_running) {
    s->error = "dynamic: view or plan smaller than ABI 1.0 requires";
    return SY_ERR_INVALID_ARG;
  }
  try {
    const sy::dynamic::Decision d = s->policy.plan(*v, *p);
    if (g_host && g_host->counter_add) {
      g_host->counter_add("sched_dynamic_steps", 1);
      g_host->counter_add("sched_dynamic_budget_tokens", d.budget);
      g_host->counter_add("sched_dynamic_target_batch", d.target_batch);
      g_host->counter_add("sched_dynamic_wait_ns",
                          static_cast<double>(std::max<int64_t>(
                              0, p->n_entries ? 0 : std::min<int64_t>(d.wait_ns, 1'000'000'000))));
      g_host->counter_add("sched_dynamic_preemptions", d.n_preempted);
    }
    if (g_host && g_host->log) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "budget %u tokens, target batch %u, %u planned (%u admitted, %u skipped), %u "
                    "preempted, wait %lld ns",
                    d.budget, d.target_batch, p->n_entries, d.n_admitted, d.n_skipped,
                    d.n_preempted, static_cast<long long>(d.wait_ns));
      g_host->log(SY_LOG_DEBUG, "dynamic", line);
    }
  } catch (const std::exception& e) {
    s->error = std::string("dynamic: ") + e.what();
    return SY_ERR_INTERNAL;
  }
  return SY_OK;
}

const sy_scheduler_iface kIface = {
    sizeof(sy_scheduler_iface), 0, create, destroy, last_error, plan};

SY_PLUGIN_NOTE(SY_PLUGIN_SCHEDULER, "dynamic", "0.1.0", SY_CAP_CHUNKED_PREFILL | SY_CAP_PREEMPTION,
               "optimized: continuous batching, chunked prefill, adaptive budget and window, "
               "prefix-aware, bounded preemption");

}  // namespace

extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                               sy_plugin_info* info) {
  if (const sy_status st = sy::plugin::negotiate(host_abi_version, info, "dynamic")) return st;
  g_host = host;
  sy::plugin::describe_from_note(info, sy_plugin_note_);
  info->iface = &kIface;
  info->shutdown = nullptr;
  return SY_OK;
}
