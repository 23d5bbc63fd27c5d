#include "engine/cost_model.h"

#include <algorithm>
#include <cmath>

namespace sy::engine {
namespace {
// Weight of the prior on each unknown, in observations, before any step is seen; it fades
// over kFade steps (a prior far from the backend would otherwise bias every later estimate).
constexpr double kPriorWeight = 0.05, kFade = 16.0;
// Weight of a knot's bend (the change of slope there), in observations, over 1 + the steps seen
// there: a knot the steps inform bends as they say (a kernel switch is a jump), one they do not
// continues its neighbours' line.
constexpr double kBendWeight = 3.0;
constexpr uint64_t kRefitEvery = 8;
constexpr double kLastKnot = 16384;

double tokens_of(const sy_step_shape& s) {
  return double(s.n_prefill_tokens) + double(s.n_decode_seqs);
}

// The prior's f: base + max(weights, per_token * n).
double roofline(const CostModel::Prior& p, double n) {
  return p.base_ns + std::max(p.weights_ns, p.per_token_ns * n);
}

// Every size up to 8 (kernels switch there), then four knots per octave.
std::vector<double> make_knots() {
  std::vector<double> k;
  for (int n = 0; n <= 8; ++n) k.push_back(n);
  for (double octave = 8; octave < kLastKnot; octave *= 2)
    for (int q = 1; q <= 4; ++q) k.push_back(octave + octave * q / 4);
  return k;
}

// The segment [knots[i], knots[i + 1]] that n falls in (the last one past the end) and n's
// weight on its upper knot.
std::pair<size_t, double> locate(const std::vector<double>& knots, double n) {
  const size_t hi = std::clamp<size_t>(
      size_t(std::upper_bound(knots.begin(), knots.end(), n) - knots.begin()), 1, knots.size() - 1);
  return {hi - 1, (n - knots[hi - 1]) / (knots[hi] - knots[hi - 1])};
}

// Solves m x = rhs in place, x in rhs (Gaussian elimination, partial pivoting); false if
// singular.
bool solve_linear(std::vector<std::vector<double>>& m, std::vector<double>& rhs) {
  const size_t n = rhs.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[p][c])) p = r;
    std::swap(m[c], m[p]);
    std::swap(rhs[c], rhs[p]);
    if (std::fabs(m[c][c]) < 1e-300) return false;
    for (size_t r = c + 1; r < n; ++r) {
      const double f = m[r][c] / m[c][c];
      if (f == 0) continue;
      for (size_t k = c; k < n; ++k) m[r][k] -= f * m[c][k];
      rhs[r] -= f * rhs[c];
    }
  }
  for (size_t c = n; c-- > 0;) {
    for (size_t k = c + 1; k < n; ++k) rhs[c] -= m[c][k] * rhs[k];
    rhs[c] /= m[c][c];
  }
  return true;
}

}  // namespace

CostModel::CostModel(Prior prior) : prior_(prior), knots_(make_knots()) {
  window_.reserve(kWindow);
  for (double k : knots_) values_.push_back(roofline(prior_, k));
  per_ctx_ns_ = prior_.per_ctx_ns;
}

double CostModel::eval(double tokens, double ctx) const {
  const auto [i, w] = locate(knots_, tokens);
  return (1 - w) * values_[i] + w * values_[i + 1] + per_ctx_ns_ * ctx;
}

void CostModel::observe(const sy_step_shape& shape, int64_t elapsed_ns) {
  const Obs o{tokens_of(shape), double(shape.kv_ctx_tokens), double(elapsed_ns)};
  if (o.ns <= 0) return;
  if (window_.size() < kWindow) {
    window_.push_back(o);
  } else {
    window_[next_] = o;
    next_ = (next_ + 1) % kWindow;
  }
  ++n_;
  // Refit often while few steps are known, then every kRefitEvery steps (an estimate a few
  // steps old is as good).
  if (n_ < 4 * kRefitEvery || n_ % kRefitEvery == 0) dirty_ = true;
}

// Least squares on each step's relative error. The unknowns are f at every knot and d, each
// solved as a multiple of its scale (the prior's f there; 1 / d's column norm), which keeps the
// normal equations well conditioned. A step of n tokens weighs on the two knots around n, so
// the equations build in one pass. Only observe() marks the fit stale, so the window is never
// empty here.
void CostModel::solve() const {
  dirty_ = false;
  const size_t K = knots_.size(), D = K, U = K + 1;  // d: the last unknown
  std::vector<double> scale(U);
  for (size_t k = 0; k < K; ++k) scale[k] = std::max(1.0, roofline(prior_, knots_[k]));
  // mean (ctx / t)^2, d's column norm; the mean step, which bends are measured against.
  double ctx_norm = 0, mean_ns = 0;
  for (const Obs& o : window_) {
    ctx_norm += (o.ctx / o.ns) * (o.ctx / o.ns) / double(window_.size());
    mean_ns += o.ns / double(window_.size());
  }
  scale[D] = ctx_norm > 0 ? 1 / std::sqrt(ctx_norm) : 1;

  std::vector<std::vector<double>> m(U, std::vector<double>(U, 0.0));
  std::vector<double> rhs(U, 0.0);
  auto add = [&]<size_t N>(const size_t(&idx)[N], const double(&x)[N], double weight,
                           double target) {
    for (size_t a = 0; a < N; ++a) {
      for (size_t b = 0; b < N; ++b) m[idx[a]][idx[b]] += weight * x[a] * x[b];
      rhs[idx[a]] += weight * x[a] * target;
    }
  };
  std::vector<double> seen(K, 0.0);  // the steps at each knot (a step shares itself between two)
  for (const Obs& o : window_) {
    const auto [i, w] = locate(knots_, o.tokens);
    seen[i] += 1 - w;
    seen[i + 1] += w;
    add({i, i + 1, D},
        {(1 - w) * scale[i] / o.ns, w * scale[i + 1] / o.ns, o.ctx * scale[D] / o.ns}, 1, 1);
  }
  const double ridge = kPriorWeight * kFade / (kFade + double(window_.size()));
  for (size_t k = 0; k < K; ++k) {
    m[k][k] += ridge;
    rhs[k] += ridge;  // the prior is 1 (its own scale)
  }
  m[D][D] += ridge;
  rhs[D] += ridge * prior_.per_ctx_ns / scale[D];
  for (size_t k = 1; k + 1 < K; ++k) {  // bend at knot k: the change of slope there
    const double lo = 1 / (knots_[k] - knots_[k - 1]), hi = 1 / (knots_[k + 1] - knots_[k]);
    const double h = (knots_[k + 1] - knots_[k - 1]) / 2 / mean_ns;
    add({k - 1, k, k + 1},
        {lo * h * scale[k - 1], -(lo + hi) * h * scale[k], hi * h * scale[k + 1]},
        kBendWeight / (1 + seen[k]), 0.0);
  }
  std::vector<std::vector<double>> m0 = m;
  std::vector<double> x = rhs;
  if (!solve_linear(m, x)) return;
  if (x[D] < 0) {  // reading context cannot save time: refit with d = 0
    m = std::move(m0);
    x = rhs;
    for (size_t k = 0; k < U; ++k) m[D][k] = m[k][D] = 0;
    m[D][D] = 1;
    x[D] = 0;
    if (!solve_linear(m, x)) return;
  }
  // A larger step never costs less: the running maximum keeps f non-decreasing.
  for (size_t k = 0; k < K; ++k) values_[k] = std::max(k ? values_[k - 1] : 0.0, x[k] * scale[k]);
  per_ctx_ns_ = x[D] * scale[D];
}

int64_t CostModel::estimate(const sy_step_shape& shape) const {
  if (dirty_) solve();
  return static_cast<int64_t>(eval(tokens_of(shape), double(shape.kv_ctx_tokens)));
}

int64_t CostModel::estimate_cb(void* ctx, const sy_step_shape* shape) {
  return static_cast<const CostModel*>(ctx)->estimate(*shape);
}

}  // namespace sy::engine
