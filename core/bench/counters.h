// Engine counters the benchmark reads from the engine that ran the variant (Engine::counters();
// plugins feed them through sy_host_api.counter_add_to / counter_add, the host through
// sy::host_counter_add). Each is a running total; the
// bench takes the difference over a run. A key that no component publishes stays unset and the
// report prints n/a for what depends on it: nothing here is ever estimated.
//
//   prefix_cache_hit_tokens      prompt tokens served from the prefix cache
//   prefix_cache_query_tokens    prompt tokens looked up in the prefix cache
//   routing_ns                   nanoseconds spent in the triage router
//   overlap_hidden_host_ns       host planning done while a forward pass computed ([engine]
//   overlap) overlap_wait_ns              host time waiting for the forward pass after that
//   planning expert_activations.L.E       tokens routed to expert E of layer L (MoE layers)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sy::bench {

struct EngineCounters {
  std::optional<double> prefix_hit_tokens, prefix_query_tokens, routing_ns;
  std::optional<double> overlap_hidden_ns, overlap_wait_ns;
  std::map<uint32_t, std::vector<double>> expert_activations;  // layer -> per-expert totals
};

// after - before, for every key present after (a key that first appears counts from 0).
std::map<std::string, double> counter_delta(const std::map<std::string, double>& before,
                                            const std::map<std::string, double>& after);

EngineCounters read_counters(const std::map<std::string, double>& delta);

}  // namespace sy::bench
