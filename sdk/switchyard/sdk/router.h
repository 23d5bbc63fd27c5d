// A router plugin on the SDK is its policy class alone (see scheduler.h for the shape):
//   static constexpr sy::plugin::Info kInfo{"name", "0.1.0", "description", 0, /*min_minor=*/2};
//   void route(const sy_route_request& request, sy_route_decision& decision);  // may throw
//   SY_DEFINE_ROUTER_PLUGIN(Policy)
// Routers exist since ABI 1.2: kInfo.min_minor below 2 is raised to 2.
#pragma once

#include <algorithm>

#include "switchyard/sdk/policy_handle.h"

namespace sy::plugin {

template <class Policy>
struct RouterPlugin : detail::HandleEntries<Policy, sy_router_t> {
  using Entries = detail::HandleEntries<Policy, sy_router_t>;
  static sy_status route(sy_router_t h, const sy_route_request* q, sy_route_decision* d) {
    return detail::call_policy<Policy>(h, [&](Policy& policy) {
      if (!q || !d)
        throw Error(SY_ERR_INVALID_ARG, std::string(Policy::kInfo.name) + ": request is NULL");
      policy.route(*q, *d);
    });
  }
  static constexpr sy_router_iface kIface = {sizeof(sy_router_iface), 0,
                                             &Entries::create,        &Entries::destroy,
                                             &Entries::last_error,    &route};
  static sy_status entry(uint32_t host_abi_version, const sy_host_api* host, sy_plugin_info* info) {
    Info about = Policy::kInfo;
    about.min_minor = std::max<uint32_t>(about.min_minor, 2);
    return plugin_entry(about, SY_PLUGIN_ROUTER, &kIface, host_abi_version, host, info);
  }
};

}  // namespace sy::plugin

#define SY_DEFINE_ROUTER_PLUGIN(Policy)                                                           \
  SY_SDK_PLUGIN_NOTE(SY_PLUGIN_ROUTER, Policy::kInfo);                                            \
  extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version,                       \
                                                 const sy_host_api* host, sy_plugin_info* info) { \
    return ::sy::plugin::RouterPlugin<Policy>::entry(host_abi_version, host, info);               \
  }
