// Capacity model: how many replicas carry a target load within a latency SLO, from the measured
// per-class service cost (engine busy time attributed to each request) and a traffic mix.
//
// With D the mean cost of a request under the mix and c_s^2 its squared coefficient of
// variation, one replica at arrival rate lambda is busy rho = lambda * D, and the SLO quantile of
// the latency is modelled with Kingman's G/G/1 form
//     T(lambda) = T0 + kappa * (c_a^2 + c_s^2) / 2 * rho / (1 - rho) * D
// where c_a^2 is the arrivals' squared CV (1 / burstiness for gamma arrivals). T0 (latency with
// no queueing) and kappa (how the quantile scales with the mean wait) are fitted by least
// squares to the request-rate sweep's unsaturated points; with fewer than two, T0 is the smallest
// unsaturated measurement (of any, when all are saturated) and kappa 1. Replicas are assumed to
// split the load evenly at random, so each sees lambda / R.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/stats.h"

namespace sy::bench {

struct LoadPoint {
  double rate;         // requests/s offered to one replica
  double latency_s;    // measured SLO quantile of the latency at that rate
  double utilization;  // measured busy fraction of the engine in that run
};

// Points at or past saturation say how long the backlog grew in that run, not how latency
// depends on load: the fit leaves out runs busier than this, or with rho = rate * D >= 1.
constexpr double kSaturatedUtilization = 0.9;

struct CapacityModel {
  Summary simple_cost_s, complex_cost_s;  // per-class cost distributions (seconds)
  double simple_ratio = 0.5;              // the mix the estimate is for
  double demand_s = 0, cs2 = 0, ca2 = 1;
  double t0_s = 0, kappa = 1;
  size_t fit_points = 0;  // sweep points the fit used (0: defaults)
  std::string error;      // set when the mix needs a class with no measured cost

  // +inf when rho >= 1.
  double latency_at(double rate) const;
  // The largest rate one replica carries within slo_s (0 when even an idle replica misses it),
  // never above kSaturatedUtilization / D.
  double max_rate(double slo_s) const;
};

CapacityModel fit_capacity(const std::vector<double>& simple_cost_s,
                           const std::vector<double>& complex_cost_s, double simple_ratio,
                           double ca2, const std::vector<LoadPoint>& sweep);

struct CapacityEstimate {
  double per_replica_rate = 0;
  uint32_t replicas = 0;           // 0: infeasible (see reason)
  double predicted_latency_s = 0;  // at target / replicas
  std::string reason;
};

CapacityEstimate estimate_replicas(const CapacityModel& m, double target_rate, double slo_s);

}  // namespace sy::bench
