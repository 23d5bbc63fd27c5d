// The optimized scheduler as a plugin: sy::dynamic::Policy on the SDK, with its options and
// its metrics. Every option can be switched off from TOML for ablations (chunked_prefill,
// adaptive, preemption, priority, prefix_ordering).
#include <algorithm>
#include <cstdio>

#include "dynamic_policy.h"
#include "switchyard/sdk/scheduler.h"

namespace {

class Dynamic {
 public:
  static constexpr sy::plugin::Info kInfo{
      "dynamic", "0.1.0",
      "optimized: continuous batching, chunked prefill, adaptive budget and window, "
      "prefix-aware, bounded preemption",
      SY_CAP_CHUNKED_PREFILL | SY_CAP_PREEMPTION};
  using Options = sy::dynamic::Options;
  static void declare(sy::plugin::Params<Options>& p) {
    p.add("chunked_prefill", &Options::chunked_prefill);
    p.add("adaptive", &Options::adaptive);
    p.add("preemption", &Options::preemption);
    p.add("priority", &Options::priority);
    p.add("prefix_ordering", &Options::prefix_ordering);
    p.add("max_preemptions", &Options::max_preemptions, 0, 1000);
    p.add("max_num_seqs", &Options::max_num_seqs, 0, 1 << 20);
    p.add("min_budget", &Options::min_budget, 1, 1 << 20);
    p.add("target_step_ms", &Options::target_step_ms, 0.01, 1e6);
    p.add("max_wait_ms", &Options::max_wait_ms, 0.0, 1e6);
    p.add("aging_ms", &Options::aging_ms, 0.0, 1e9);
    p.add("watermark", &Options::watermark, 0.0, 0.5);
    p.add("defer_pending_tokens", &Options::defer_pending_tokens, 1, 1 << 20);
  }
  explicit Dynamic(const Options& o) : policy_(o) {}

  void plan(const sy_sched_view& v, sy_sched_plan& p) {
    if (p.entries_capacity < v.n_running + v.n_waiting || p.preempt_capacity < v.n_running)
      throw sy::plugin::Error(SY_ERR_INVALID_ARG,
                              "dynamic: plan capacities smaller than the view's requests");
    const sy::dynamic::Decision d = policy_.plan(v, p);
    // Counters go to the engine that planned with this view (ABI 1.3), process-wide before.
    auto count = [&](const char* name, double x) { sy::plugin::counter_add(v, name, x); };
    count("sched_dynamic_steps", 1);
    count("sched_dynamic_budget_tokens", d.budget);
    count("sched_dynamic_target_batch", d.target_batch);
    count("sched_dynamic_wait_ns",
          static_cast<double>(
              std::max<int64_t>(0, p.n_entries ? 0 : std::min<int64_t>(d.wait_ns, 1'000'000'000))));
    count("sched_dynamic_preemptions", d.n_preempted);
    count("sched_dynamic_deferred", d.n_deferred);
    char line[256];
    std::snprintf(line, sizeof line,
                  "budget %u tokens, target batch %u, %u planned (%u admitted, %u skipped), %u "
                  "preempted, wait %lld ns",
                  d.budget, d.target_batch, p.n_entries, d.n_admitted, d.n_skipped, d.n_preempted,
                  static_cast<long long>(d.wait_ns));
    sy::plugin::log_to_host(SY_LOG_DEBUG, line);
  }

 private:
  sy::dynamic::Policy policy_;
};

}  // namespace

SY_DEFINE_SCHEDULER_PLUGIN(Dynamic)
