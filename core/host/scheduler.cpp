#include "host/scheduler.h"

#include <stdexcept>

namespace sy {
namespace {

// The plugin's own sy_sched_t, called directly.
class InProcessScheduler : public SchedulerImpl {
 public:
  InProcessScheduler(const Plugin& plugin, const Params& params) : api_(plugin.scheduler_iface()) {
    if (!api_) throw PluginError(plugin.name() + " is not a scheduler plugin");
    std::vector<sy_param> p;
    for (const auto& [k, v] : params) p.push_back({k.c_str(), v.c_str()});
    const sy_status st = api_->create(p.data(), p.size(), &h_);
    if (st != SY_OK) {
      const char* e = api_->last_error(nullptr);
      throw PluginError("scheduler " + plugin.name() +
                        ": create: " + (e && *e ? e : "unknown error"));
    }
  }
  ~InProcessScheduler() override {
    if (h_) api_->destroy(h_);
  }
  sy_status plan(const sy_sched_view& view, sy_sched_plan& plan, std::string& error) override {
    const sy_status st = api_->plan(h_, &view, &plan);
    if (st != SY_OK) {
      const char* e = api_->last_error(h_);
      error = e && *e ? e : "unknown error";
    }
    return st;
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
  if (!plugin_)
    throw std::logic_error("scheduler " + name_ + " runs in a child process, not in this one");
  return *plugin_;
}

}  // namespace sy
