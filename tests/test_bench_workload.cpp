// The workload generator's distributions for fixed seeds: gamma moments, arrival rate and
// burstiness (CV^2 of the gaps = 1 / shape), length distributions, class mix, shared prefixes,
// and trace replay.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "bench/rng.h"
#include "bench/stats.h"
#include "bench/workload.h"

using namespace sy::bench;

namespace {

Summary gaps_of(const std::vector<double>& t) {
  std::vector<double> g{t[0]};
  for (size_t i = 1; i < t.size(); ++i) g.push_back(t[i] - t[i - 1]);
  return summarize(g);
}

double cv2(const Summary& s) {
  return s.std * s.std / (s.mean * s.mean);
}

}  // namespace

TEST(BenchRng, GammaHasShapeMeanAndVariance) {
  for (double shape : {0.25, 1.0, 3.0}) {
    Rng rng(42);
    std::vector<double> v;
    for (int i = 0; i < 200000; ++i) v.push_back(rng.gamma(shape));
    const Summary s = summarize(v);
    EXPECT_NEAR(s.mean, shape, 0.02 * shape) << "shape " << shape;
    EXPECT_NEAR(s.std * s.std, shape, 0.05 * shape) << "shape " << shape;
    EXPECT_GT(s.min, 0);
  }
}

TEST(BenchWorkload, ArrivalsHaveTheRateAndBurstiness) {
  for (double b : {0.25, 1.0, 4.0}) {
    Rng rng(7);
    const auto t = arrival_times(20000, 5.0, b, rng);
    // Rescaled like vLLM: the last arrival lands exactly at n / rate.
    EXPECT_NEAR(t.back(), 20000 / 5.0, 1e-6);
    const Summary g = gaps_of(t);
    EXPECT_NEAR(g.mean, 0.2, 1e-9);
    EXPECT_NEAR(cv2(g), 1.0 / b, 0.06 / b) << "burstiness " << b;
  }
}

TEST(BenchWorkload, ConstantAndInstantArrivals) {
  Rng rng(1);
  const auto even = arrival_times(10, 2.0, INFINITY, rng);
  for (size_t i = 0; i < even.size(); ++i) EXPECT_NEAR(even[i], 0.5 * (i + 1), 1e-12);
  const auto burst = arrival_times(10, INFINITY, 1.0, rng);
  for (double x : burst) EXPECT_EQ(x, 0.0);
}

TEST(BenchWorkload, LengthDistributions) {
  Rng rng(3);
  LengthDist bi;
  bi.kind = LengthDist::Kind::bimodal;
  bi.short_min = 8, bi.short_max = 16, bi.long_min = 200, bi.long_max = 300, bi.long_fraction = 0.3;
  size_t longs = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint32_t n = bi.sample(rng);
    ASSERT_TRUE((n >= 8 && n <= 16) || (n >= 200 && n <= 300)) << n;
    longs += n >= 200;
  }
  EXPECT_NEAR(longs / 20000.0, 0.3, 0.015);

  LengthDist normal;
  normal.kind = LengthDist::Kind::normal;
  normal.mean = 50, normal.std = 10, normal.min = 1, normal.max = 1000;
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) v.push_back(normal.sample(rng));
  const Summary s = summarize(v);
  EXPECT_NEAR(s.mean, 50, 0.5);
  EXPECT_NEAR(s.std, 10, 0.3);

  LengthDist uni;
  uni.kind = LengthDist::Kind::uniform;
  uni.min = 8, uni.max = 48;
  std::set<uint32_t> seen;
  for (int i = 0; i < 5000; ++i) seen.insert(uni.sample(rng));
  EXPECT_EQ(*seen.begin(), 8u);
  EXPECT_EQ(*seen.rbegin(), 48u);
  EXPECT_EQ(seen.size(), 41u);
}

TEST(BenchWorkload, ClassMixAndSharedPrefix) {
  WorkloadSpec w;
  w.seed = 11;
  w.requests = 4000;
  w.rate = 100;
  w.simple_ratio = 0.6;
  w.shared_prefix_ratio = 0.3;
  w.shared_prefix_len = 16;
  w.simple.prompt.value = 10;  // fixed
  w.complex.prompt.value = 40;
  w.simple.output.value = 3;
  w.complex.output.value = 30;
  const auto items = generate_workload(w);
  ASSERT_EQ(items.size(), 4000u);
  size_t simple = 0, shared = 0;
  std::optional<std::vector<int32_t>> prefix;
  for (const auto& it : items) {
    simple += it.simple;
    shared += it.shared_prefix;
    const size_t own = it.simple ? 10 : 40;
    EXPECT_EQ(it.prompt.size(), own + (it.shared_prefix ? 16 : 0));
    EXPECT_EQ(it.max_new_tokens, it.simple ? 3u : 30u);
    for (int32_t t : it.prompt) ASSERT_TRUE(t >= kFirstToken && t < kEndToken) << t;
    if (it.shared_prefix) {
      std::vector<int32_t> head(it.prompt.begin(), it.prompt.begin() + 16);
      if (!prefix) prefix = head;
      EXPECT_EQ(head, *prefix);
    }
  }
  EXPECT_NEAR(simple / 4000.0, 0.6, 0.03);
  EXPECT_NEAR(shared / 4000.0, 0.3, 0.03);

  // Same seed: the same workload. Another rate: new arrivals, the same requests.
  const auto again = generate_workload(w);
  EXPECT_EQ(again[17].prompt, items[17].prompt);
  EXPECT_EQ(again[17].arrival_ns, items[17].arrival_ns);
  const auto faster = generate_workload(at_rate(w, 200, 4000));
  EXPECT_EQ(faster[17].prompt, items[17].prompt);
  EXPECT_NE(faster[17].arrival_ns, items[17].arrival_ns);
  EXPECT_NEAR(faster.back().arrival_ns / 1e9, 4000 / 200.0, 1e-6);
}

TEST(BenchWorkload, TraceReplayAndRescale) {
  const auto path = std::filesystem::temp_directory_path() / "sy_bench_trace.csv";
  {
    std::ofstream out(path);
    out << "arrival_s,prompt_len,output_len,class\n# a "
           "comment\n10,5,2,simple\n11,6,3,complex\n12,7,4\n14,8,5,simple\n";
  }
  WorkloadSpec w;
  w.arrival = WorkloadSpec::Arrival::trace;
  w.trace_path = path.string();
  w.rate = 0;  // as recorded, from the first arrival
  auto items = generate_workload(w);
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].arrival_ns, 0);
  EXPECT_EQ(items[3].arrival_ns, 4'000'000'000);
  EXPECT_EQ(items[1].prompt.size(), 6u);
  EXPECT_EQ(items[2].max_new_tokens, 4u);
  EXPECT_TRUE(items[0].simple);
  EXPECT_FALSE(items[1].simple);
  EXPECT_FALSE(items[2].simple);
  // 4 requests over 4 s is 1 req/s; at 2 req/s the trace runs twice as fast.
  items = generate_workload(at_rate(w, 2.0, 99));
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[1].arrival_ns, 500'000'000);
  EXPECT_EQ(items[3].arrival_ns, 2'000'000'000);

  {
    std::ofstream out(path);
    out << "0,5,2\n1,five,2\n";
  }
  try {
    generate_workload(w);
    FAIL() << "a malformed trace parsed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() +
                                         ":2: expected 'arrival_s,prompt_len,output_len[,class]' "
                                         "with lengths >= 1, got '1,five,2'");
  }
  {
    std::ofstream out(path);
    out << "0,5,2,hard\n";
  }
  try {
    generate_workload(w);
    FAIL() << "an unknown class parsed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ":1: class must be 'simple' or 'complex', got 'hard'");
  }
  std::filesystem::remove(path);
}
