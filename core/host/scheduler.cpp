#include "host/scheduler.h"

namespace sy {

Scheduler::Scheduler(std::shared_ptr<Plugin> plugin, const Params& params)
    : plugin_(std::move(plugin)), api_(plugin_->scheduler_iface()) {
  if (!api_) throw PluginError(plugin_->name() + " is not a scheduler plugin");
  std::vector<sy_param> p;
  for (const auto& [k, v] : params) p.push_back({k.c_str(), v.c_str()});
  const sy_status st = api_->create(p.data(), p.size(), &h_);
  if (st != SY_OK) {
    const char* e = api_->last_error(nullptr);
    throw PluginError("scheduler " + plugin_->name() + ": create: " + (e && *e ? e : "unknown error"));
  }
}

Scheduler::~Scheduler() {
  if (h_) api_->destroy(h_);
}

sy_status Scheduler::plan(const sy_sched_view& view, sy_sched_plan& plan, std::string& error) {
  const sy_status st = api_->plan(h_, &view, &plan);
  if (st != SY_OK) {
    const char* e = api_->last_error(h_);
    error = e && *e ? e : "unknown error";
  }
  return st;
}

}  // namespace sy
