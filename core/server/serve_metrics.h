// The metrics the server exports: vLLM's names under the `switchyard:` prefix (model_name and
// variant labels), plus queue depth, batch sizes, path split, routing time, expert activation,
// swaps and the shadow comparison. Runners feed it as they work; gauges and the engines' own
// counters (preemptions, prefix cache, ...: one set per engine instance) are read from the live
// runners at scrape time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "server/engine_runner.h"
#include "server/metrics_registry.h"

namespace sy::server {

struct ShadowResult;

class ServeMetrics : public RunnerObserver {
 public:
  explicit ServeMetrics(std::string model_name, uint32_t max_context_hint = 4096);

  void on_step(const std::string& variant, const engine::StepStats& st, int64_t step_ns) override;
  void on_token(const std::string& variant, const engine::Request& r) override;
  void on_finish(const std::string& variant, const Outcome& o) override;

  // reason: queue_full, invalid, timeout, no_variant ...
  void rejected(const std::string& variant, const std::string& reason);
  void timed_out(const std::string& variant);
  void routed(const std::string& variant, uint32_t path);
  void swap(bool ok);
  void shadow_skipped(const std::string& shadow, const std::string& reason);
  void shadow_compared(const std::string& primary, const std::string& shadow,
                       const ShadowResult& r);

  // The whole exposition: gauges and engine counters from `live` (several runners may share a
  // variant name while one drains: they are summed), then every family.
  std::string render(const std::vector<RunnerSnapshot>& live);
  Registry& registry() { return reg_; }
  Labels labels(const std::string& variant) const {
    return {{"model_name", model_}, {"variant", variant}};
  }

 private:
  std::string model_;
  Registry reg_;
};

}  // namespace sy::server
