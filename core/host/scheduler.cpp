#include "host/scheduler.h"

#include <stdexcept>

#include "host/plugin_call.h"
#include "switchyard/common/error.h"

namespace sy {
namespace {

// The plugin's own sy_sched_t, called directly.
class InProcessScheduler : public SchedulerImpl {
 public:
  InProcessScheduler(const Plugin& plugin, const Params& params) : api_(plugin.scheduler_iface()) {
    if (!api_) throw PluginError(plugin.name() + " is not a scheduler plugin");
    std::string why;
    if (const sy_status st = create_through(*api_, params, &h_, why); st != SY_OK)
      throw PluginError("scheduler " + plugin.name() + ": create: " + why, st);
  }
  ~InProcessScheduler() override {
    if (h_) api_->destroy(h_);
  }
  void plan(const sy_sched_view& view, sy_sched_plan& plan) override {
    bool threw = false;
    const sy_status st = plugin_call([&] { return api_->plan(h_, &view, &plan); }, &threw);
    if (st != SY_OK) throw Error(st, plugin_message(threw ? nullptr : api_->last_error(h_), threw));
  }

 private:
  const sy_scheduler_iface* api_;
  sy_sched_t h_ = nullptr;
};

}  // namespace

Scheduler::Scheduler(std::shared_ptr<Plugin> plugin, const Params& params)
    : name_(plugin->name()),
      plugin_(std::move(plugin)),
      impl_(std::make_unique<InProcessScheduler>(*plugin_, params)) {}

Scheduler::Scheduler(std::string name, std::unique_ptr<SchedulerImpl> impl)
    : name_(std::move(name)), impl_(std::move(impl)) {}

Scheduler::~Scheduler() = default;

const Plugin& Scheduler::plugin() const {
  if (!plugin_) throw sy::Bug("scheduler " + name_ + " runs in a child process, not in this one");
  return *plugin_;
}

}  // namespace sy
