// The capacity model: mixture moments of the per-class costs, the fit of T0 and kappa to a
// sweep, and the replicas it asks for, against values computed by hand; the KV bytes a decode
// step reads (bench-backend's and bench-hybrid's frac read).
#include <gtest/gtest.h>

#include <cmath>

#include "bench/capacity.h"
#include "bench/model_costs.h"

using namespace sy::bench;

namespace {

// simple: 10 and 30 ms (mean 20, std 10); complex: 100 ms. Half and half:
// D = 60 ms, E[S^2] = 0.5 (0.0001 + 0.0004) + 0.5 (0.01) = 0.00525, c_s^2 = 0.00525/0.0036 - 1.
const std::vector<double> kSimple{0.010, 0.030}, kComplex{0.100};
constexpr double kCs2 = 0.00525 / 0.0036 - 1;

double truth(double rate) {  // T0 = 0.2 s, kappa = 2, c_a^2 = 1
  const double rho = rate * 0.06;
  return 0.2 + 2 * (1 + kCs2) / 2 * rho / (1 - rho) * 0.06;
}

}  // namespace

TEST(BenchCapacity, MixtureMomentsAndExactFit) {
  std::vector<LoadPoint> sweep;
  for (double r : {2.0, 5.0, 10.0}) sweep.push_back({r, truth(r), 0.06 * r});
  sweep.push_back({20.0, 9.0, 0.99});  // rho = 1.2: saturated, not fitted
  sweep.push_back({12.0, 7.0, 0.95});  // rho = 0.72 but measured 95% busy: not fitted either
  const CapacityModel m = fit_capacity(kSimple, kComplex, 0.5, 1.0, sweep);
  EXPECT_TRUE(m.error.empty());
  EXPECT_NEAR(m.demand_s, 0.06, 1e-12);
  EXPECT_NEAR(m.cs2, 0.4583333333, 1e-9);
  EXPECT_EQ(m.fit_points, 3u);
  EXPECT_NEAR(m.t0_s, 0.2, 1e-9);
  EXPECT_NEAR(m.kappa, 2.0, 1e-9);
  EXPECT_TRUE(std::isinf(m.latency_at(1 / 0.06)));

  // a = kappa (c_a^2 + c_s^2)/2 D = 0.0875; SLO 0.8 s leaves s = 0.6: rho = 0.6/0.6875.
  EXPECT_NEAR(m.max_rate(0.8), 0.6 / 0.6875 / 0.06, 1e-9);
  const CapacityEstimate e = estimate_replicas(m, 40, 0.8);
  EXPECT_EQ(e.replicas, 3u);  // 40 / 14.55 = 2.75
  EXPECT_NEAR(e.per_replica_rate, 14.5454545455, 1e-6);
  EXPECT_NEAR(e.predicted_latency_s, 0.2 + 0.0875 * 4, 1e-9);  // rho = 0.8 at 13.33 req/s
  // SLO 1 s would allow rho = 0.8/0.8875 = 0.90141: capped at 0.9.
  EXPECT_NEAR(m.max_rate(1.0), 0.9 / 0.06, 1e-9);
  EXPECT_EQ(estimate_replicas(m, 15, 1.0).replicas, 1u);
}

TEST(BenchCapacity, MixShiftsTheDemand) {
  const CapacityModel all_simple = fit_capacity(kSimple, kComplex, 1.0, 1.0, {});
  EXPECT_NEAR(all_simple.demand_s, 0.02, 1e-12);
  EXPECT_NEAR(all_simple.cs2, 0.25, 1e-12);  // (10/20)^2
  // No usable sweep point: T0 falls back to 0 (nothing measured), kappa to 1.
  EXPECT_EQ(all_simple.fit_points, 0u);
  EXPECT_DOUBLE_EQ(all_simple.kappa, 1);
}

TEST(BenchCapacity, FallbacksAndInfeasibleTargets) {
  // One unsaturated point: T0 is its value (not the saturated one's), kappa 1.
  CapacityModel m = fit_capacity(kSimple, kComplex, 0.5, 1.0, {{4.0, 0.3, 0.3}, {30.0, 0.1, 0.99}});
  EXPECT_EQ(m.fit_points, 0u);
  EXPECT_DOUBLE_EQ(m.t0_s, 0.3);
  EXPECT_DOUBLE_EQ(m.kappa, 1);
  // Only saturated points: the smallest of them.
  m = fit_capacity(kSimple, kComplex, 0.5, 1.0, {{30.0, 0.9, 0.99}, {40.0, 0.8, 1.0}});
  EXPECT_DOUBLE_EQ(m.t0_s, 0.8);
  // Latency falling with load: no queueing term, T0 the mean.
  m = fit_capacity(kSimple, kComplex, 0.5, 1.0, {{2.0, 0.5, 0.1}, {8.0, 0.3, 0.5}});
  EXPECT_DOUBLE_EQ(m.kappa, 0);
  EXPECT_NEAR(m.t0_s, 0.4, 1e-12);
  EXPECT_NEAR(m.max_rate(1.0), 0.9 / 0.06, 1e-9);  // capped at the saturation utilization

  const CapacityEstimate e = estimate_replicas(m, 10, 0.1);
  EXPECT_EQ(e.replicas, 0u);
  EXPECT_EQ(e.reason, "an idle replica already needs 400.000000 ms, over the SLO");

  const CapacityModel none = fit_capacity({}, kComplex, 0.5, 1.0, {});
  EXPECT_EQ(none.error, "no measured cost for the simple class the mix needs");
  EXPECT_EQ(estimate_replicas(none, 10, 1).replicas, 0u);
}

// A decode step's KV read: K and V rows (head_dim x KV heads) of every attention layer for
// each position it attends to, step i after a prompt of p tokens attending to p + i + 1 of
// them; the hybrid's Mamba layers keep no KV rows.
TEST(BenchModelCosts, KvBytesPerDecodeStepSumsTheContextOfEveryStep) {
  const sy::model::ModelShape dense = sy::model::preset_shape("dense-20m");
  const double row = 8.0 * 2 * 64 * 4;  // layers x (K, V) x head_dim (512 / 8) x KV heads
  EXPECT_EQ(kv_bytes_per_token(dense, 4), uint64_t(row * 4));
  EXPECT_EQ(kv_bytes_per_token(dense, 2), uint64_t(row * 2));
  double sum = 0;
  for (int i = 0; i < 32; ++i) sum += row * 4 * (1024 + i + 1);
  EXPECT_DOUBLE_EQ(kv_bytes_per_decode_step(dense, 4, 1024, 32), sum / 32);
  EXPECT_DOUBLE_EQ(kv_bytes_per_decode_step(dense, 4, 0, 1), row * 4);
  const sy::model::ModelShape hybrid = sy::model::preset_shape("hybrid-20m");  // 2 of 8 layers
  EXPECT_DOUBLE_EQ(kv_bytes_per_decode_step(hybrid, 4, 1024, 32), sum / 32 / 4);
}

// gemma4e-tiny: layers local, global, local, global, local (window 8; local heads 16 wide on
// 2 KV heads, global 32 on 1), the last three reading layers 0 and 1's caches. Attention reads
// all five layers' keys; the sequence holds only layers 0 and 1's.
TEST(BenchModelCosts, SharedKvLayersReadButHoldNothing) {
  const sy::model::ModelDesc d = sy::model::describe_shape(sy::model::preset_shape("gemma4e-tiny"));
  const double local = 2.0 * 16 * 2 * 4, global = 2.0 * 32 * 1 * 4;  // K and V, F32, per token
  EXPECT_DOUBLE_EQ(sy::bench::kv_bytes_at(d, 4, 100), 3 * local * 8 + 2 * global * 100);
  EXPECT_DOUBLE_EQ(sy::bench::kv_bytes_held(d, 4, 100), local * 8 + global * 100);
  EXPECT_EQ(d.kv_widths(), (std::vector<uint32_t>{32, 32}));
}
