#include "engine/triage_hook.h"

#include "host/host_api.h"

namespace sy::engine {

void check_light_experts(const TriageConfig& cfg, const model::ModelInfo& info,
                         const std::string& model_path) {
  if (!cfg.light_experts) return;
  const std::string at = cfg.light_experts_at + ": triage.light_experts: ";
  if (info.n_expert == 0)
    throw ConfigError(at + "the model " + model_path +
                      " is dense (no MoE experts); the light path can only use fewer experts of "
                      "an MoE model");
  if (cfg.light_experts > info.n_expert)
    throw ConfigError(at + "must be in [1, " + std::to_string(info.n_expert) + "] for " +
                      model_path + " (" + std::to_string(info.n_expert) + " experts, " +
                      std::to_string(info.n_expert_used) + " per token by default), got " +
                      std::to_string(cfg.light_experts));
}

std::function<void(RequestSpec&, uint64_t id)> make_triage_hook(TriageRouter* router,
                                                                const TriageConfig& cfg) {
  const bool force_full = cfg.force_full || !router;
  const uint32_t light_experts = cfg.light_experts;
  return [router, force_full, light_experts](RequestSpec& spec, uint64_t id) {
    uint32_t path = SY_PATH_FULL;
    if (!force_full) {
      const int64_t t0 = now_ns();
      const RouteResult r = router->route(
          RouteInput{id, &spec.prompt, spec.max_new_tokens, spec.priority, spec.simple_hint});
      host_counter_add("routing_ns", double(now_ns() - t0));
      path = r.path;
      if (r.reason) host_counter_add("triage_reason." + std::to_string(r.reason), 1);
    }
    spec.path = path;
    spec.n_expert_used = path == SY_PATH_LIGHT ? light_experts : 0;
    host_counter_add(path == SY_PATH_LIGHT ? "triage_light_requests" : "triage_full_requests", 1);
  };
}

}  // namespace sy::engine
