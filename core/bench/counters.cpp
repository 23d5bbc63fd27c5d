#include "bench/counters.h"

#include <cstdlib>

namespace sy::bench {

std::map<std::string, double> counter_delta(const std::map<std::string, double>& before,
                                            const std::map<std::string, double>& after) {
  std::map<std::string, double> d;
  for (const auto& [k, v] : after) {
    auto it = before.find(k);
    d[k] = v - (it == before.end() ? 0.0 : it->second);
  }
  return d;
}

namespace {

// "L.E" -> (L, E); false unless both are plain non-negative integers.
bool layer_expert(const std::string& s, uint32_t& layer, uint32_t& expert) {
  const size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return false;
  char* end = nullptr;
  const unsigned long l = std::strtoul(s.c_str(), &end, 10);
  if (end != s.c_str() + dot) return false;
  const unsigned long e = std::strtoul(s.c_str() + dot + 1, &end, 10);
  if (*end || s[dot + 1] == '-' || s[0] == '-') return false;
  layer = static_cast<uint32_t>(l);
  expert = static_cast<uint32_t>(e);
  return true;
}

}  // namespace

EngineCounters read_counters(const std::map<std::string, double>& d) {
  EngineCounters c;
  auto get = [&](const char* k) -> std::optional<double> {
    auto it = d.find(k);
    if (it == d.end()) return std::nullopt;
    return it->second;
  };
  c.prefix_hit_tokens = get("prefix_cache_hit_tokens");
  c.prefix_query_tokens = get("prefix_cache_query_tokens");
  c.routing_ns = get("routing_ns");
  c.overlap_hidden_ns = get("overlap_hidden_host_ns");
  c.overlap_wait_ns = get("overlap_wait_ns");
  const std::string prefix = "expert_activations.";
  for (auto it = d.lower_bound(prefix); it != d.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    uint32_t l = 0, e = 0;
    if (!layer_expert(it->first.substr(prefix.size()), l, e)) continue;
    auto& v = c.expert_activations[l];
    if (v.size() <= e) v.resize(e + 1, 0.0);
    v[e] = it->second;
  }
  return c;
}

}  // namespace sy::bench
