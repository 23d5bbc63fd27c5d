#include "bench/capacity.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sy::bench {

double CapacityModel::latency_at(double rate) const {
  const double rho = rate * demand_s;
  if (rho >= 1) return std::numeric_limits<double>::infinity();
  return t0_s + kappa * (ca2 + cs2) / 2 * rho / (1 - rho) * demand_s;
}

double CapacityModel::max_rate(double slo_s) const {
  if (demand_s <= 0 || slo_s < t0_s) return 0;
  const double a = kappa * (ca2 + cs2) / 2 * demand_s, s = slo_s - t0_s;
  // a * rho / (1 - rho) <= s  <=>  rho <= s / (a + s); and never past the utilization where the
  // sweep's runs stopped telling anything (the fit has no data beyond it).
  const double rho = a > 0 ? s / (a + s) : 1.0;
  return std::min(rho, kSaturatedUtilization) / demand_s;
}

CapacityModel fit_capacity(const std::vector<double>& simple, const std::vector<double>& complex,
                           double simple_ratio, double ca2, const std::vector<LoadPoint>& sweep) {
  CapacityModel m;
  m.simple_cost_s = summarize(simple);
  m.complex_cost_s = summarize(complex);
  m.simple_ratio = simple_ratio;
  m.ca2 = ca2;
  if ((simple_ratio > 0 && simple.empty()) || (simple_ratio < 1 && complex.empty())) {
    m.error = std::string("no measured cost for the ") + (simple.empty() ? "simple" : "complex") +
              " class the mix needs";
    return m;
  }
  // Mixture moments: E[S] and E[S^2] weighted by the mix.
  auto second = [](const Summary& s) { return s.std * s.std + s.mean * s.mean; };
  const double w = simple_ratio;
  m.demand_s = w * m.simple_cost_s.mean + (1 - w) * m.complex_cost_s.mean;
  const double es2 = w * second(m.simple_cost_s) + (1 - w) * second(m.complex_cost_s);
  m.cs2 = m.demand_s > 0 ? es2 / (m.demand_s * m.demand_s) - 1 : 0;

  std::vector<double> xs, ys;
  double ymin = std::numeric_limits<double>::infinity(), ymin_any = ymin;
  for (const auto& p : sweep) {
    ymin_any = std::min(ymin_any, p.latency_s);
    const double rho = p.rate * m.demand_s;
    if (rho >= 1 || p.utilization >= kSaturatedUtilization || !std::isfinite(p.latency_s)) continue;
    xs.push_back((ca2 + m.cs2) / 2 * rho / (1 - rho) * m.demand_s);
    ys.push_back(p.latency_s);
    ymin = std::min(ymin, p.latency_s);
  }
  if (!std::isfinite(ymin)) ymin = ymin_any;
  const bool distinct = xs.size() >= 2 && *std::max_element(xs.begin(), xs.end()) >
                                              *std::min_element(xs.begin(), xs.end());
  if (!distinct) {
    m.t0_s = std::isfinite(ymin) ? ymin : 0;
    m.kappa = 1;
    return m;
  }
  const double n = xs.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sx += xs[i];
    sy += ys[i];
    sxx += xs[i] * xs[i];
    sxy += xs[i] * ys[i];
  }
  m.kappa = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  m.t0_s = (sy - m.kappa * sx) / n;
  if (m.kappa < 0) {  // latency did not grow with load: no queueing term
    m.kappa = 0;
    m.t0_s = sy / n;
  } else if (m.t0_s < 0) {  // through the origin
    m.t0_s = 0;
    m.kappa = sxy / sxx;
  }
  m.fit_points = xs.size();
  return m;
}

CapacityEstimate estimate_replicas(const CapacityModel& m, double target, double slo_s) {
  CapacityEstimate e;
  if (!m.error.empty()) {
    e.reason = m.error;
    return e;
  }
  e.per_replica_rate = m.max_rate(slo_s);
  if (e.per_replica_rate <= 0) {
    e.reason =
        "an idle replica already needs " + std::to_string(m.t0_s * 1e3) + " ms, over the SLO";
    return e;
  }
  e.replicas = static_cast<uint32_t>(std::max(1.0, std::ceil(target / e.per_replica_rate - 1e-9)));
  e.predicted_latency_s = m.latency_at(target / e.replicas);
  return e;
}

}  // namespace sy::bench
