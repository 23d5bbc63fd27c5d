#include "host/triage_router.h"

#include "host/host_api.h"
#include "host/log.h"
#include "host/plugin_call.h"

namespace sy {

TriageRouter::TriageRouter(std::shared_ptr<Plugin> plugin, const Params& params)
    : plugin_(std::move(plugin)), api_(plugin_->router_iface()) {
  if (!api_) throw PluginError(plugin_->name() + " is not a router plugin");
  std::string why;
  if (create_through(*api_, params, &h_, why) != SY_OK)
    throw PluginError("router " + plugin_->name() + ": create: " + why);
}

TriageRouter::~TriageRouter() {
  if (h_) api_->destroy(h_);
}

RouteResult TriageRouter::route(const RouteInput& in) noexcept {
  sy_route_request req{};
  req.struct_size = sizeof req;
  req.prompt_len = in.prompt ? static_cast<uint32_t>(in.prompt->size()) : 0;
  ++calls_;
  req.id = in.id;
  req.max_new_tokens = in.max_new_tokens;
  req.priority = in.priority;
  req.simple_hint = in.simple_hint ? 1 : 0;
  req.prompt = in.prompt ? in.prompt->data() : nullptr;
  sy_route_decision d{};
  d.struct_size = sizeof d;
  std::string why;
  try {
    const sy_status st = api_->route(h_, &req, &d);
    if (st != SY_OK) {
      const char* e = api_->last_error(h_);
      why =
          "status " + std::to_string(static_cast<int>(st)) + ": " + (e && *e ? e : "unknown error");
    } else if (d.path != SY_PATH_FULL && d.path != SY_PATH_LIGHT) {
      why = "unknown path " + std::to_string(d.path);
    }
  } catch (...) {
    why = "route threw an exception across the C ABI";
  }
  RouteResult r;
  if (!why.empty()) {
    // Full is always safe: it is what the request would get without a router.
    try {
      logger()->error("router {}: request {}: {}; taking the full path", name(), req.id, why);
      host_counter_add("triage_errors", 1);
    } catch (...) {
    }
    r.failed = true;
    return r;
  }
  r.path = d.path;
  r.reason = d.reason;
  return r;
}

}  // namespace sy
