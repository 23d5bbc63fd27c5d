// The engine's triage hook from a [triage] table: which path each request takes, and what the
// light path means for the model (fewer MoE experts per token).
#pragma once

#include <functional>
#include <string>

#include "config/config.h"
#include "engine/request.h"
#include "host/triage_router.h"
#include "model/model.h"

namespace sy::engine {

// Checks [triage] light_experts against the loaded model: in [1, n_expert] for an MoE model,
// refused for a dense one (its light path could only be the same model). Throws ConfigError
// naming the key's file:line:col.
void check_light_experts(const TriageConfig& cfg, const model::ModelInfo& info,
                         const std::string& model_path);

// Sets spec.path from the router (never called with force_full, or without a router) and
// spec.n_expert_used (light: light_experts; full: the model's default). Adds the router call's
// time to host counter "routing_ns" and counts "triage_light_requests", "triage_full_requests"
// and "triage_reason.<code>". `router` may be null only with force_full; it must outlive the hook.
std::function<void(RequestSpec&, uint64_t id)> make_triage_hook(TriageRouter* router,
                                                                const TriageConfig& cfg);

}  // namespace sy::engine
