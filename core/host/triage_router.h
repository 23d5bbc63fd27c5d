// The triage router the engine asks which path a request takes (in this process, RAII over the
// plugin's sy_router_t). A failing plugin never fails a request: route() answers full instead,
// logs the plugin's reason and counts "triage_errors".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/backend.h"
#include "host/plugin_host.h"

namespace sy {

// The cheap features a router sees (sy_route_request without the C layout).
struct RouteInput {
  uint64_t id = 0;  // the engine's request id
  const std::vector<int32_t>* prompt = nullptr;
  uint32_t max_new_tokens = 0;
  int32_t priority = 0;
  bool simple_hint = false;
};

struct RouteResult {
  uint32_t path = SY_PATH_FULL;
  uint32_t reason = 0;  // the router's code, 0: none
  bool failed = false;  // the call failed or answered an unknown path: `path` is full
};

class TriageRouter {
 public:
  // Creates the plugin's router with `params`; throws PluginError with the plugin's reason.
  TriageRouter(std::shared_ptr<Plugin> plugin, const Params& params);
  ~TriageRouter();
  TriageRouter(const TriageRouter&) = delete;
  TriageRouter& operator=(const TriageRouter&) = delete;
  const std::string& name() const { return plugin_->name(); }
  // Never throws. Calls on one router must be serialised (the ABI's thread contract).
  RouteResult route(const RouteInput& in) noexcept;
  uint64_t calls() const { return calls_; }

 private:
  std::shared_ptr<Plugin> plugin_;  // keeps the library mapped while h_ lives
  const sy_router_iface* api_;
  sy_router_t h_ = nullptr;
  uint64_t calls_ = 0;
};

}  // namespace sy
