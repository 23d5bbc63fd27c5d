// The offered-load sweep: which rates the automatic sweep runs given what the earlier points
// measured, the SLO check of a point, the knee, and the headline, against sequences worked out
// by hand from the rules in core/bench/sweep.h.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/sweep.h"

using namespace sy::bench;

namespace {

SweepPoint point(double rate, double throughput, bool met) {
  SweepPoint p;
  p.rate = rate;
  p.serving.completed = 8;
  p.serving.request_throughput = throughput;
  p.meets_slo = met;
  return p;
}

SweepSpec automatic() {
  SweepSpec s;
  s.enabled = true;
  s.start = 1.0;
  s.factor = 2.0;
  s.min_rise = 0.05;
  s.refine = 2;
  s.max_points = 10;
  return s;
}

}  // namespace

TEST(BenchSweep, APointMeetsTheSloWhenEverySetLatencyIsInsideIt) {
  Slo slo;
  slo.ttft_ms = 1000;
  slo.tpot_ms = 100;
  SweepPoint p = point(2, 2, false);
  p.ttft_ms = 1000, p.tpot_ms = 100, p.e2el_ms = 1e9;  // e2el is not set: not checked
  EXPECT_TRUE(meets_slo(p, slo));
  p.tpot_ms = 100.5;
  EXPECT_FALSE(meets_slo(p, slo));
  p.tpot_ms = 50, p.ttft_ms = INFINITY;  // a request never finished
  EXPECT_FALSE(meets_slo(p, slo));
  p.ttft_ms = 10, p.serving.completed = 0;  // nothing completed meets nothing
  EXPECT_FALSE(meets_slo(p, slo));
  p.serving.completed = 1;
  EXPECT_TRUE(meets_slo(p, Slo{})) << "no SLO set: every completed point meets it";
}

TEST(BenchSweep, TheKneeIsTheHighestThroughputAmongThePointsMeetingTheSlo) {
  EXPECT_FALSE(find_knee({point(1, 0.9, false), point(2, 1.5, false)}).found);
  const Knee k = find_knee(
      {point(1, 1, true), point(4, 3.5, false), point(2.8, 2.6, true), point(2, 1.9, true)});
  ASSERT_TRUE(k.found);
  EXPECT_EQ(k.rate, 2.8);
  EXPECT_EQ(k.throughput, 2.6);
}

// Throughput follows min(rate, 3) and the SLO holds up to 3 req/s: x2 from 1 until the top
// point carries no more than the best lower one (8 after 4), then two bisections between the
// knee and the first miss above it: sqrt(2 x 4), then sqrt(2.83 x 4).
TEST(BenchSweep, AutomaticSweepDoublesPastSaturationThenBisectsTowardTheFirstMiss) {
  const SweepSpec spec = automatic();
  SweepPlanner planner(spec);
  std::vector<SweepPoint> done;
  std::vector<double> rates;
  while (auto r = planner.next(done)) {
    rates.push_back(*r);
    done.push_back(point(*r, std::min(*r, 3.0), *r <= 3.0));
    ASSERT_LE(rates.size(), 20u) << "the sweep does not end";
  }
  const std::vector<double> want{1, 2, 4, 8, std::sqrt(8.0), std::sqrt(std::sqrt(8.0) * 4)};
  ASSERT_EQ(rates.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(rates[i], want[i], 1e-9) << "point " << i;
  EXPECT_EQ(find_knee(done).rate, rates[4]) << "the last bisection missed";
}

// Still rising by more than min_rise: no saturation yet, so the sweep keeps doubling even past
// a miss, until max_points.
TEST(BenchSweep, ThroughputStillRisingKeepsDoublingUpToMaxPoints) {
  SweepSpec spec = automatic();
  spec.max_points = 5;
  SweepPlanner planner(spec);
  std::vector<SweepPoint> done;
  while (auto r = planner.next(done)) done.push_back(point(*r, 0.9 * *r, *r <= 2));
  ASSERT_EQ(done.size(), 5u);
  EXPECT_EQ(done.back().rate, 16);
}

// Even the first load misses: look lower twice (by factor^2 each), then give up.
TEST(BenchSweep, EveryLoadMissingProbesLowerTwiceThenStops) {
  const SweepSpec spec = automatic();
  SweepPlanner planner(spec);
  std::vector<SweepPoint> done;
  std::vector<double> rates;
  while (auto r = planner.next(done)) {
    rates.push_back(*r);
    done.push_back(point(*r, *r, false));
  }
  EXPECT_EQ(rates, (std::vector<double>{1, 0.25, 0.0625}));
}

TEST(BenchSweep, ListedRatesRunInOrderAndRequestsScaleWithSeconds) {
  SweepSpec spec;
  spec.rates = {3, 1.5};
  SweepPlanner listed(spec);
  std::vector<SweepPoint> done;
  std::vector<double> rates;
  while (auto r = listed.next(done)) {
    rates.push_back(*r);
    done.push_back(point(*r, *r, true));
  }
  EXPECT_EQ(rates, spec.rates);
  EXPECT_EQ(listed.requests_at(1.5), 16u) << "no seconds: the fixed count";
  spec.seconds = 4, spec.min_requests = 8, spec.requests = 64;
  const SweepPlanner timed(spec);
  EXPECT_EQ(timed.requests_at(1.5), 8u);  // ceil(6), at least min_requests
  EXPECT_EQ(timed.requests_at(12), 48u);
  EXPECT_EQ(timed.requests_at(48), 64u);  // at most requests
}

TEST(BenchSweep, HeadlineGivesEachKneeAndTheRatioToTheFirstOfItsModel) {
  Slo slo;
  slo.ttft_ms = 1000;
  slo.tpot_ms = 100;
  Knee orig{true, 1.5, 1.41, 600}, opt{true, 3, 2.42, 300}, hyb{true, 3.5, 2.46, 700};
  const std::string h = knee_headline({{"dense/original", orig},
                                       {"dense/optimized", opt},
                                       {"hybrid/original", Knee{}},
                                       {"hybrid/optimized", hyb}},
                                      slo, 99);
  EXPECT_EQ(h,
            "Knee (max request throughput with TTFT p99 <= 1000 ms, TPOT p99 <= 100 ms): "
            "dense/original 1.41 req/s; dense/optimized 2.42 req/s (1.72x dense/original); "
            "hybrid/original none (every load missed); hybrid/optimized 2.46 req/s");
}
