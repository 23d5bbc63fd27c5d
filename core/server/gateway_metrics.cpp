#include "server/gateway_metrics.h"

namespace sy::server {
namespace {
const char* const kWaiting = "vllm:num_requests_waiting";
const char* const kRunning = "vllm:num_requests_running";
const char* const kUsage = "vllm:kv_cache_usage_perc";
const char* const kCacheInfo = "vllm:cache_config_info";
}  // namespace

void define_gateway_metrics(Registry& r) {
  r.define_gauge(kWaiting, "Number of requests waiting to be processed.");
  r.define_gauge(kRunning, "Number of requests in model execution batches.");
  r.define_gauge(kUsage, "KV-cache usage. 1 means 100 percent usage.");
  r.define_gauge(kCacheInfo, "Information of the LLMEngine CacheConfig.");
}

void update_gateway_metrics(Registry& r, const std::string& model_name,
                            const std::vector<RunnerSnapshot>& live, const Deployment* d) {
  double waiting = 0, running = 0, used = 0, total = 0;
  for (const auto& s : live) {
    waiting += s.waiting + s.pending;  // submitted but not yet in the engine is queued too
    running += s.running;
    used += s.kv_used;
    total += s.kv_total;
  }
  const Labels m = {{"model_name", model_name}};
  r.set(kWaiting, m, waiting);
  r.set(kRunning, m, running);
  r.set(kUsage, m, total > 0 ? used / total : 0);
  r.clear(kCacheInfo);
  if (!d || d->variants.empty()) return;
  const Deployment::Entry* base = d->find(d->baseline);
  if (!base) base = &d->variants.front();
  uint64_t blocks = 0;
  for (const auto& e : d->variants) blocks += e.runner->variant().cache->pool().total();
  r.set(kCacheInfo,
        {{"model_name", model_name},
         {"block_size", std::to_string(base->runner->variant().cache->block_size())},
         {"num_gpu_blocks", std::to_string(blocks)}},
        1);
}

}  // namespace sy::server
