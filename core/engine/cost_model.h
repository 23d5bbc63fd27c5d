// Estimated wall time of one engine step from its shape:
//   t = f(n) + d * kv_ctx_tokens,   n = prefill tokens + decode sequences
// f is piecewise linear in n over fixed knots (every size up to 8, then four per octave) and
// non-decreasing; d is attention per cached token read. A step is first memory-bound (its
// tokens ride almost free on the weights it streams once), then compute-bound, and the
// backend switches kernels on the way (the CPU backend runs a GEMV up to a few rows and a GEMM
// past them): a roofline a + max(w, c n) cannot follow such a step in the curve and was off by
// 35-60% around it, a curve with a knot at every small size can.
// Fitted online to the steps the engine ran (the most recent kWindow) by least squares on the
// relative error, pulled to a roofline prior from the model's size (which fades as steps
// accumulate) and, where no step was seen, to a straight continuation of its neighbours.
#pragma once

#include <cstdint>
#include <vector>

#include "switchyard/abi/backend.h"

namespace sy::engine {

class CostModel {
 public:
  // The prior: a roofline t = base + max(weights, per_token * n) + per_ctx * ctx.
  struct Prior {
    double base_ns = 0;       // fixed per-step cost (host work, kernel launches)
    double weights_ns = 0;    // streaming the weights once, which every step pays
    double per_token_ns = 0;  // compute per token
    double per_ctx_ns = 0;    // attention per cached token read
  };
  static constexpr size_t kWindow = 512;

  explicit CostModel(Prior prior);
  void observe(const sy_step_shape& shape, int64_t elapsed_ns);
  int64_t estimate(const sy_step_shape& shape) const;
  uint64_t observations() const { return n_; }

  // The C callback the scheduler view carries; ctx is a CostModel*.
  static int64_t estimate_cb(void* ctx, const sy_step_shape* shape);

 private:
  struct Obs {
    double tokens, ctx, ns;
  };
  void solve() const;
  double eval(double tokens, double ctx) const;
  Prior prior_;
  std::vector<double> knots_;
  std::vector<Obs> window_;  // ring buffer
  size_t next_ = 0;
  uint64_t n_ = 0;
  mutable std::vector<double> values_;  // f at each knot
  mutable double per_ctx_ns_ = 0;
  mutable bool dirty_ = false;
};

}  // namespace sy::engine
