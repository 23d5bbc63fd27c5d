// The service table the host lends to plugins, and the counters plugins and the host feed.
//
// Counters are running totals kept twice: process-wide (host_counters(), every engine's and every
// plugin's together) and per engine instance (a Counters each Engine owns), so that in a process
// serving several variants each engine's metrics stay its own. A counter reaches an engine's set
// through the context the plugin passes back (sy_host_api.counter_add_to with
// sy_sched_view.host_ctx, ABI 1.3), or through the CounterScope the engine holds open on the
// thread doing its work (how older plugins' counter_add calls during plan() land there).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "switchyard/abi/host.h"

namespace sy {

// Named running totals; thread-safe.
class Counters {
 public:
  void add(const std::string& name, double delta);
  std::map<std::string, double> snapshot() const;
  double get(const std::string& name) const;  // 0 when never added

 private:
  mutable std::mutex mu_;
  std::map<std::string, double> values_;
};

// While alive, counters added on this thread with host_counter_add (by the host, or by a plugin
// through sy_host_api.counter_add) also go to `c`. Scopes nest; null opens none.
class CounterScope {
 public:
  explicit CounterScope(Counters* c);
  ~CounterScope();
  CounterScope(const CounterScope&) = delete;
  CounterScope& operator=(const CounterScope&) = delete;

 private:
  Counters* prev_;
};

const sy_host_api* host_api();
int64_t now_ns();
// Process-wide totals of every counter added through sy_host_api or host_counter_add.
std::map<std::string, double> host_counters();
// Adds to the process-wide total and to the thread's CounterScope, if one is open.
void host_counter_add(const std::string& name, double delta);
// Adds to the process-wide total and to `ctx` (a Counters* handed out as host_ctx; null: none).
void host_counter_add_to(void* ctx, const std::string& name, double delta);

}  // namespace sy
