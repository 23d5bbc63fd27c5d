// Estimated wall time of one engine step from its shape: a linear model
//   t = a + b * prefill_tokens + c * decode_seqs + d * kv_ctx_tokens
// fitted online (ridge-regularised least squares) to the steps the engine has run, starting
// from a prior derived from the model's size. The backend's own estimate, when it offers one
// (ABI 1.1 estimate_step_ns), is used instead.
#pragma once

#include <array>
#include <cstdint>

#include "switchyard/abi/backend.h"

namespace sy::engine {

class CostModel {
 public:
  // Prior coefficients in nanoseconds.
  CostModel(double base_ns, double per_prefill_token_ns, double per_decode_seq_ns,
            double per_ctx_token_ns);
  void observe(const sy_step_shape& shape, int64_t elapsed_ns);
  int64_t estimate(const sy_step_shape& shape) const;
  std::array<double, 4> coefficients() const;
  uint64_t observations() const { return n_; }

  // The C callback the scheduler view carries; ctx is a CostModel*.
  static int64_t estimate_cb(void* ctx, const sy_step_shape* shape);

 private:
  static std::array<double, 4> features(const sy_step_shape& s);
  void solve() const;
  std::array<double, 4> prior_;
  std::array<std::array<double, 4>, 4> xtx_{};  // sum of x x^T (+ ridge)
  std::array<double, 4> xty_{};
  uint64_t n_ = 0;
  mutable std::array<double, 4> coef_;
  mutable bool dirty_ = false;
};

}  // namespace sy::engine
