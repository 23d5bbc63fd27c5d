// The Gateway API Inference Extension's model-server protocol (gateway-api-inference-extension,
// docs/proposals/003-model-server-protocol) for the vLLM engine type, which an endpoint picker
// (the EPP, llm-d's router) scrapes from /metrics to route by queue depth and KV usage:
//   vllm:num_requests_waiting    requests queued, not running (every variant of the replica)
//   vllm:num_requests_running    requests in the running batch
//   vllm:kv_cache_usage_perc     KV blocks in use over all blocks, 0..1
//   vllm:cache_config_info       1, labels block_size and num_gpu_blocks
// each with model_name (the served name). The replica is the unit the EPP picks, so the gauges
// sum every runner of the replica, a draining one included. `[serve] gateway_metrics = false`
// leaves the families out.
#pragma once

#include <string>
#include <vector>

#include "server/engine_runner.h"
#include "server/metrics_registry.h"
#include "server/router.h"

namespace sy::server {

void define_gateway_metrics(Registry& r);
// `live`: the runners' snapshots; `d`: the active deployment (null: nothing loaded yet), whose
// baseline variant's block size and whose total blocks cache_config_info reports.
void update_gateway_metrics(Registry& r, const std::string& model_name,
                            const std::vector<RunnerSnapshot>& live, const Deployment* d);

}  // namespace sy::server
