// Estimated wall time of one engine step from its shape, batch-aware (a roofline):
//   t = a + max(w, c * n) + d * kv_ctx_tokens,   n = prefill tokens + decode sequences
// a: fixed per-step cost (host work, kernel launches); w: streaming the weights once, which every
// step pays however few tokens it carries; c: compute per token; d: attention per cached token
// read. Below n = w / c a step is memory-bound and its tokens ride almost free, so a batch of 8
// decodes costs about what one does, not eight times as much (a linear model in n, as this was
// before, cannot say that and made the adaptive budget pack too few tokens).
// Fitted online to the steps the engine ran (the most recent kWindow): for each candidate
// memory-bound threshold (an observed step size) the four coefficients are solved by
// ridge-regularised least squares around a prior derived from the model's size, and the fit
// with the least error of the max() model wins (then refined until the regimes settle).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "switchyard/abi/backend.h"

namespace sy::engine {

class CostModel {
 public:
  struct Coefficients {
    double base_ns = 0;       // a
    double weights_ns = 0;    // w
    double per_token_ns = 0;  // c
    double per_ctx_ns = 0;    // d
  };
  static constexpr size_t kWindow = 512;

  explicit CostModel(Coefficients prior);
  void observe(const sy_step_shape& shape, int64_t elapsed_ns);
  int64_t estimate(const sy_step_shape& shape) const;
  Coefficients coefficients() const;
  uint64_t observations() const { return n_; }
  // The step size (tokens) past which compute, not weight streaming, bounds a step.
  double memory_bound_tokens() const;

  // The C callback the scheduler view carries; ctx is a CostModel*.
  static int64_t estimate_cb(void* ctx, const sy_step_shape* shape);

 private:
  struct Obs {
    double tokens, ctx, ns;
  };
  void solve() const;
  bool fit(const std::vector<bool>& memory, Coefficients& out) const;
  double sse(const Coefficients& c) const;
  static double eval(const Coefficients& c, double tokens, double ctx);
  Coefficients prior_;
  std::vector<Obs> window_;  // ring buffer
  size_t next_ = 0;
  uint64_t n_ = 0;
  mutable Coefficients coef_;
  mutable bool dirty_ = false;
};

}  // namespace sy::engine
