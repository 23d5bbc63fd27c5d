// A scheduler plugin on the SDK is its policy class alone:
//
//   class Sjf {
//    public:
//     static constexpr sy::plugin::Info kInfo{"sjf", "0.1.0", "shortest job first"};
//     struct Options { uint32_t max_batch = 8; };
//     static void declare(sy::plugin::Params<Options>& p) {
//       p.add("max_batch", &Options::max_batch, 1, 4096);
//     }
//     explicit Sjf(const Options& o);
//     void plan(const sy_sched_view& view, sy_sched_plan& plan);  // may throw
//   };
//   SY_DEFINE_SCHEDULER_PLUGIN(Sjf)
//
// The macro writes sy_plugin_entry (handshake, info), create (typed options, unknown keys
// refused), destroy, last_error (per handle; last_error(NULL) is the last failed create) and plan,
// which checks the view and plan structs, clears the plan's counts and catches every exception.
#pragma once

#include "switchyard/sdk/policy_handle.h"

namespace sy::plugin {

template <class Policy>
struct SchedulerPlugin : detail::HandleEntries<Policy, sy_sched_t> {
  using Entries = detail::HandleEntries<Policy, sy_sched_t>;
  static sy_status plan(sy_sched_t h, const sy_sched_view* v, sy_sched_plan* p) {
    return detail::call_policy<Policy>(h, [&](Policy& policy) {
      if (!v || !p || v->struct_size < SY_SCHED_VIEW_SIZE_1_0 ||
          (p->entries_capacity && !p->entries) || (p->preempt_capacity && !p->preempt))
        throw Error(SY_ERR_INVALID_ARG, std::string(Policy::kInfo.name) +
                                            ": view or plan smaller than ABI 1.0 requires");
      p->n_entries = p->n_preempt = 0;
      p->wait_ns = 0;
      policy.plan(*v, *p);
    });
  }
  static constexpr sy_scheduler_iface kIface = {sizeof(sy_scheduler_iface), 0,
                                                &Entries::create,           &Entries::destroy,
                                                &Entries::last_error,       &plan};
  static sy_status entry(uint32_t host_abi_version, const sy_host_api* host, sy_plugin_info* info) {
    return plugin_entry(Policy::kInfo, SY_PLUGIN_SCHEDULER, &kIface, host_abi_version, host, info);
  }
};

}  // namespace sy::plugin

#define SY_DEFINE_SCHEDULER_PLUGIN(Policy)                                                        \
  SY_SDK_PLUGIN_NOTE(SY_PLUGIN_SCHEDULER, Policy::kInfo);                                         \
  extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version,                       \
                                                 const sy_host_api* host, sy_plugin_info* info) { \
    return ::sy::plugin::SchedulerPlugin<Policy>::entry(host_abi_version, host, info);            \
  }
