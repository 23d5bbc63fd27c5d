// The scheduler the engine asks for a plan each step. By default the plugin runs in this process
// (RAII over its sy_sched_t); out of process it runs in a child behind a proxy
// (process_scheduler.h). Both look the same to the engine.
#pragma once

#include <memory>
#include <string>

#include "host/backend.h"
#include "host/plugin_host.h"

namespace sy {

// One way of running a scheduler plugin.
class SchedulerImpl {
 public:
  virtual ~SchedulerImpl() = default;
  // Throws sy::Error with the plugin's status and message when the call fails.
  virtual void plan(const sy_sched_view& view, sy_sched_plan& plan) = 0;
};

class Scheduler {
 public:
  // In this process: creates the plugin's scheduler with `params`; throws PluginError.
  Scheduler(std::shared_ptr<Plugin> plugin, const Params& params);
  // Any other way (make_process_scheduler); `name` is the plugin's.
  Scheduler(std::string name, std::unique_ptr<SchedulerImpl> impl);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  const std::string& name() const { return name_; }
  bool in_process() const { return plugin_ != nullptr; }
  // The loaded plugin; throws std::logic_error when the scheduler runs out of process.
  const Plugin& plugin() const;
  // Throws sy::Error(status, the plugin's message) when the plugin's plan fails.
  void plan(const sy_sched_view& view, sy_sched_plan& plan) { impl_->plan(view, plan); }

 private:
  std::string name_;
  std::shared_ptr<Plugin> plugin_;  // null out of process; outlives impl_, which calls into it
  std::unique_ptr<SchedulerImpl> impl_;
};

}  // namespace sy
