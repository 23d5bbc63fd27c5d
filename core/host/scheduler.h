// RAII over one sy_sched_t.
#pragma once

#include <memory>
#include <string>

#include "host/backend.h"
#include "host/plugin_host.h"

namespace sy {

class Scheduler {
 public:
  Scheduler(std::shared_ptr<Plugin> plugin, const Params& params);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  const Plugin& plugin() const { return *plugin_; }
  // Returns the status; on failure `error` holds the plugin's message.
  sy_status plan(const sy_sched_view& view, sy_sched_plan& plan, std::string& error);

 private:
  std::shared_ptr<Plugin> plugin_;
  const sy_scheduler_iface* api_;
  sy_sched_t h_ = nullptr;
};

}  // namespace sy
