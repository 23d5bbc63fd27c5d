#include "engine/cost_model.h"

#include <algorithm>
#include <cmath>

namespace sy::engine {
namespace {
// Weight of the prior, in units of observations: a handful of real steps outweigh it.
constexpr double kPriorWeight = 4.0;
// Feature scales keep the normal equations well conditioned.
constexpr double kTokScale = 1e-2, kCtxScale = 1e-4;
}  // namespace

CostModel::CostModel(double base, double prefill, double decode, double ctx)
    : prior_{base, prefill / kTokScale, decode / kTokScale, ctx / kCtxScale}, coef_(prior_) {
  for (int i = 0; i < 4; ++i) {
    xtx_[i][i] = kPriorWeight;
    xty_[i] = kPriorWeight * prior_[i];
  }
}

std::array<double, 4> CostModel::features(const sy_step_shape& s) {
  return {1.0, s.n_prefill_tokens * kTokScale, s.n_decode_seqs * kTokScale,
          static_cast<double>(s.kv_ctx_tokens) * kCtxScale};
}

void CostModel::observe(const sy_step_shape& shape, int64_t elapsed_ns) {
  const auto x = features(shape);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) xtx_[i][j] += x[i] * x[j];
    xty_[i] += x[i] * static_cast<double>(elapsed_ns);
  }
  ++n_;
  dirty_ = true;
}

void CostModel::solve() const {
  // Gaussian elimination with partial pivoting on the 4x4 system.
  std::array<std::array<double, 5>, 4> m;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) m[i][j] = xtx_[i][j];
    m[i][4] = xty_[i];
  }
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[p][c])) p = r;
    std::swap(m[c], m[p]);
    if (std::fabs(m[c][c]) < 1e-12) return;  // keep the previous coefficients
    for (int r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = c; k < 5; ++k) m[r][k] -= f * m[c][k];
    }
  }
  for (int i = 0; i < 4; ++i)
    coef_[i] = std::max(0.0, m[i][4] / m[i][i]);  // costs are not negative
  dirty_ = false;
}

std::array<double, 4> CostModel::coefficients() const {
  if (dirty_) solve();
  return {coef_[0], coef_[1] * kTokScale, coef_[2] * kTokScale, coef_[3] * kCtxScale};
}

int64_t CostModel::estimate(const sy_step_shape& shape) const {
  if (dirty_) solve();
  const auto x = features(shape);
  double t = 0;
  for (int i = 0; i < 4; ++i) t += coef_[i] * x[i];
  return static_cast<int64_t>(t);
}

int64_t CostModel::estimate_cb(void* ctx, const sy_step_shape* shape) {
  return static_cast<const CostModel*>(ctx)->estimate(*shape);
}

}  // namespace sy::engine
