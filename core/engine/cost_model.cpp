#include "engine/cost_model.h"

#include <algorithm>
#include <cmath>

namespace sy::engine {
namespace {
// Weight of the prior, in observations, before any step is seen; it fades over kFade steps.
constexpr double kPriorWeight = 4.0, kFade = 16.0;
// Feature scales keep the normal equations well conditioned.
constexpr double kTokScale = 1e-2, kCtxScale = 1e-3;
constexpr int kMaxRounds = 6;
constexpr uint64_t kRefitEvery = 8;

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
  // Refitting tries every threshold over the whole window: often while few steps are known,
  // then every kRefitEvery steps (an estimate a few steps old is as good).
  if (n_ < 4 * kRefitEvery || n_ % kRefitEvery == 0) dirty_ = true;
}

// Least squares for one assignment of the observations to regimes: memory-bound ones have
// features [1, 1, 0, ctx], compute-bound ones [1, 0, n, ctx] (scaled), ridge-pulled to the prior.
bool CostModel::fit(const std::vector<bool>& memory, Coefficients& out) const {
  const std::array<double, 4> prior = {prior_.base_ns, prior_.weights_ns,
                                       prior_.per_token_ns / kTokScale,
                                       prior_.per_ctx_ns / kCtxScale};
  // The prior steadies a fit of few steps and fades as they accumulate (a prior far from the
  // backend would otherwise bias every later estimate).
  const double ridge = kPriorWeight * kFade / (kFade + double(window_.size()));
  std::array<std::array<double, 5>, 4> m{};
  for (int i = 0; i < 4; ++i) {
    m[i][i] = ridge;
    m[i][4] = ridge * prior[i];
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
  if (!solve4(m, x)) return false;
  out = {std::max(0.0, x[0]), std::max(0.0, x[1]), std::max(0.0, x[2]) * kTokScale,
         std::max(0.0, x[3]) * kCtxScale};
  return true;
}

double CostModel::sse(const Coefficients& c) const {
  double e = 0;
  for (const Obs& o : window_) {
    const double d = eval(c, o.tokens, o.ctx) - o.ns;
    e += d * d;
  }
  return e;
}

// The regime split is a token threshold (memory-bound up to n*), so try each observed step size
// as n* (at most 64 of them), keep the fit of the max() model with the least squared error, then
// let the assignment follow that fit until it settles.
void CostModel::solve() const {
  dirty_ = false;
  std::vector<double> sizes;
  for (const Obs& o : window_) sizes.push_back(o.tokens);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<double> cuts = {0};  // 0: every step compute-bound
  const size_t stride = std::max<size_t>(1, sizes.size() / 64);
  for (size_t i = 0; i < sizes.size(); i += stride) cuts.push_back(sizes[i]);
  std::vector<bool> memory(window_.size());
  Coefficients best = coef_;
  double best_err = window_.empty() ? 0 : sse(coef_);
  for (double cut : cuts) {
    for (size_t i = 0; i < window_.size(); ++i) memory[i] = window_[i].tokens <= cut;
    Coefficients c;
    if (!fit(memory, c)) continue;
    const double err = sse(c);
    if (err < best_err || window_.empty()) best = c, best_err = err;
  }
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (size_t i = 0; i < window_.size(); ++i) {
      const bool m_i = best.weights_ns >= best.per_token_ns * window_[i].tokens;
      changed |= m_i != memory[i];
      memory[i] = m_i;
    }
    Coefficients c;
    if (!changed || !fit(memory, c) || sse(c) >= best_err) break;
    best = c;
    best_err = sse(c);
  }
  coef_ = best;
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
