// Shadow runs: a request also runs on a second variant; the shadow's output is discarded and
// compared with the primary's (the output quality consistency check).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "server/engine_runner.h"

namespace sy::server {

struct ShadowResult {
  bool exact = false;             // same tokens, same length
  uint32_t compared = 0;          // positions compared: the longer output's length
  uint32_t agreed = 0;            // positions where both produced the same token
  int64_t first_divergence = -1;  // first position that differs (-1: none)
  double latency_diff_s = 0;      // shadow e2e latency minus the primary's
  // Triage: the primary ran light and the shadow full (a shadow variant with [triage]
  // force_full = true), so the comparison checks the router's choice; a misroute is a light
  // answer that differs from the full one.
  bool light_vs_full = false;
  bool misroute = false;
};

ShadowResult compare_outputs(const Outcome& primary, const Outcome& shadow);

// Collects the two outcomes (each arrives on its own runner's thread) and reports the
// comparison once both are in; an aborted side reports nothing to compare.
class ShadowPair {
 public:
  using Report = std::function<void(const ShadowResult&)>;
  using Skip = std::function<void(const std::string& reason)>;
  ShadowPair(Report report, Skip skip) : report_(std::move(report)), skip_(std::move(skip)) {}
  void primary_done(const Outcome& o) { done(o, true); }
  void shadow_done(const Outcome& o) { done(o, false); }

 private:
  void done(const Outcome& o, bool primary);
  std::mutex mu_;
  std::optional<Outcome> primary_, shadow_;
  Report report_;
  Skip skip_;
};

// Deterministic in [0, 1) from a request id and a salt (routing and shadow sampling differ).
double unit_hash(const std::string& id, uint64_t salt);

}  // namespace sy::server
