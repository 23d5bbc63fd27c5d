#include "engine/cost_model.h"

#include <algorithm>
#include <cmath>

namespace sy::engine {
namespace {
// Weight of the prior, in observations: a handful of real steps outweigh it.
constexpr double kPriorWeight = 4.0;
// Feature scales keep the normal equations well conditioned.
constexpr double kTokScale = 1e-2, kCtxScale = 1e-4;
constexpr int kMaxRounds = 6;

double tokens_of(const sy_step_shape& s) {
  return double(s.n_prefill_tokens) + double(s.n_decode_seqs);
}

// Solves the 4x4 system m x = rhs (Gaussian elimination, partial pivoting); false if singular.
bool solve4(std::array<std::array<double, 5>, 4> m, std::array<double, 4>& x) {
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[p][c])) p = r;
    std::swap(m[c], m[p]);
    if (std::fabs(m[c][c]) < 1e-12) return false;
    for (int r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = c; k < 5; ++k) m[r][k] -= f * m[c][k];
    }
  }
  for (int i = 0; i < 4; ++i) x[i] = m[i][4] / m[i][i];
  return true;
}

}  // namespace

CostModel::CostModel(Coefficients prior) : prior_(prior), coef_(prior) {
  window_.reserve(kWindow);
}

double CostModel::eval(const Coefficients& c, double tokens, double ctx) {
  return c.base_ns + std::max(c.weights_ns, c.per_token_ns * tokens) + c.per_ctx_ns * ctx;
}

void CostModel::observe(const sy_step_shape& shape, int64_t elapsed_ns) {
  const Obs o{tokens_of(shape), double(shape.kv_ctx_tokens), double(elapsed_ns)};
  if (window_.size() < kWindow) {
    window_.push_back(o);
  } else {
    window_[next_] = o;
    next_ = (next_ + 1) % kWindow;
  }
  ++n_;
  dirty_ = true;
}

// Features per regime: memory-bound [1, 1, 0, ctx], compute-bound [1, 0, n, ctx] (scaled).
void CostModel::solve() const {
  dirty_ = false;
  const std::array<double, 4> prior = {prior_.base_ns, prior_.weights_ns,
                                       prior_.per_token_ns / kTokScale,
                                       prior_.per_ctx_ns / kCtxScale};
  std::vector<bool> memory(window_.size());
  for (size_t i = 0; i < window_.size(); ++i)
    memory[i] = coef_.weights_ns >= coef_.per_token_ns * window_[i].tokens;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::array<std::array<double, 5>, 4> m{};
    for (int i = 0; i < 4; ++i) {
      m[i][i] = kPriorWeight;
      m[i][4] = kPriorWeight * prior[i];
    }
    for (size_t k = 0; k < window_.size(); ++k) {
      const Obs& o = window_[k];
      const std::array<double, 4> x = {1.0, memory[k] ? 1.0 : 0.0,
                                       memory[k] ? 0.0 : o.tokens * kTokScale, o.ctx * kCtxScale};
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) m[i][j] += x[i] * x[j];
        m[i][4] += x[i] * o.ns;
      }
    }
    std::array<double, 4> x;
    if (!solve4(m, x)) return;  // keep the previous coefficients
    coef_ = {std::max(0.0, x[0]), std::max(0.0, x[1]), std::max(0.0, x[2]) * kTokScale,
             std::max(0.0, x[3]) * kCtxScale};
    bool changed = false;
    for (size_t i = 0; i < window_.size(); ++i) {
      const bool m_i = coef_.weights_ns >= coef_.per_token_ns * window_[i].tokens;
      changed |= m_i != memory[i];
      memory[i] = m_i;
    }
    if (!changed) return;
  }
}

CostModel::Coefficients CostModel::coefficients() const {
  if (dirty_) solve();
  return coef_;
}

double CostModel::memory_bound_tokens() const {
  const Coefficients c = coefficients();
  return c.per_token_ns > 0 ? c.weights_ns / c.per_token_ns : 0;
}

int64_t CostModel::estimate(const sy_step_shape& shape) const {
  if (dirty_) solve();
  return static_cast<int64_t>(eval(coef_, tokens_of(shape), double(shape.kv_ctx_tokens)));
}

int64_t CostModel::estimate_cb(void* ctx, const sy_step_shape* shape) {
  return static_cast<const CostModel*>(ctx)->estimate(*shape);
}

}  // namespace sy::engine
