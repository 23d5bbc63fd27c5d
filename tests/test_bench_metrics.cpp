// Serving and engine metrics on a hand-written event log, against values computed by hand with
// vLLM's definitions and numpy's linear percentiles.
#include <gtest/gtest.h>

#include <cmath>
#include "bench/counters.h"
#include "bench/metrics.h"
#include "bench/stats.h"

using namespace sy::bench;

namespace {

constexpr int64_t ms = 1'000'000;

RequestRecord done(bool simple, uint32_t path, uint32_t prompt, int64_t arrival_ms,
                   std::vector<int64_t> tokens_ms, double cost_ms) {
  RequestRecord r;
  r.simple = simple;
  r.path = path;
  r.prompt_len = prompt;
  r.arrival_ns = arrival_ms * ms;
  for (int64_t t : tokens_ms) r.token_ns.push_back(t * ms);
  r.max_new_tokens = static_cast<uint32_t>(tokens_ms.size());
  r.finish_ns = r.token_ns.back();
  r.ok = true;
  r.cost_ns = cost_ms * ms;
  return r;
}

// A: TTFT 100, E2EL 150, TPOT 25, ITL 20 30.  B: one token, TTFT = E2EL = 200.
// C: TTFT 100, E2EL 140, TPOT 10, ITL 10 x4.  D: never finished.
RunLog sample_log() {
  RunLog log;
  log.start_ns = 0;
  log.end_ns = 300 * ms;
  log.requests.push_back(done(true, 0, 10, 0, {100, 120, 150}, 3));
  log.requests.push_back(done(false, 1, 20, 50, {250}, 6));
  log.requests.push_back(done(true, 0, 30, 100, {200, 210, 220, 230, 240}, 9));
  RequestRecord d;
  d.arrival_ns = 150 * ms;
  d.error = "timed out";
  log.requests.push_back(d);
  return log;
}

}  // namespace

TEST(BenchStats, PercentileIsNumpyLinear) {
  // numpy.percentile([1, 2, 3, 4], 25) == 1.75; ([15, 20, 35, 40, 50], 40) == 29.0
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 2, 3, 4}, 25), 1.75);
  EXPECT_DOUBLE_EQ(percentile_sorted({15, 20, 35, 40, 50}, 40), 29.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({15, 20, 35, 40, 50}, 100), 50.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({7}, 99), 7.0);
  // An exact hit next to +inf (an unfinished request) stays finite.
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 2, INFINITY}, 50), 2.0);
  const Summary s = summarize({200, 100, 100});
  EXPECT_EQ(s.n, 3u);
  EXPECT_NEAR(s.mean, 133.3333333, 1e-6);
  EXPECT_NEAR(s.std, 47.1404521, 1e-6);  // population std (ddof = 0)
  EXPECT_DOUBLE_EQ(s.p50, 100);
  EXPECT_DOUBLE_EQ(s.p90, 180);
  EXPECT_DOUBLE_EQ(s.p99, 198);
  EXPECT_EQ(summarize({}).n, 0u);
}

TEST(BenchMetrics, ServingMetricsMatchHandComputedValues) {
  const ServingMetrics m = serving_metrics(sample_log(), Slo{});
  EXPECT_EQ(m.completed, 3u);
  EXPECT_EQ(m.failed, 1u);
  EXPECT_EQ(m.total_input, 60u);
  EXPECT_EQ(m.total_output, 9u);
  EXPECT_DOUBLE_EQ(m.duration_s, 0.25);  // last token at 250 ms
  EXPECT_DOUBLE_EQ(m.request_throughput, 12.0);
  EXPECT_DOUBLE_EQ(m.output_throughput, 36.0);
  EXPECT_DOUBLE_EQ(m.total_token_throughput, 276.0);
  EXPECT_FALSE(m.request_goodput);  // no SLO configured

  EXPECT_EQ(m.ttft_ms.n, 3u);  // 100, 200, 100
  EXPECT_NEAR(m.ttft_ms.mean, 133.333333, 1e-5);
  EXPECT_NEAR(m.ttft_ms.p50, 100, 1e-9);
  EXPECT_NEAR(m.ttft_ms.p90, 180, 1e-9);
  EXPECT_NEAR(m.ttft_ms.p99, 198, 1e-9);

  EXPECT_EQ(m.tpot_ms.n, 2u);  // 25 and 10; B has one token and no TPOT
  EXPECT_NEAR(m.tpot_ms.mean, 17.5, 1e-9);
  EXPECT_NEAR(m.tpot_ms.p50, 17.5, 1e-9);
  EXPECT_NEAR(m.tpot_ms.p90, 23.5, 1e-9);
  EXPECT_NEAR(m.tpot_ms.p99, 24.85, 1e-9);

  EXPECT_EQ(m.itl_ms.n, 6u);  // 20 30 10 10 10 10, pooled
  EXPECT_NEAR(m.itl_ms.mean, 15, 1e-9);
  EXPECT_NEAR(m.itl_ms.p50, 10, 1e-9);
  EXPECT_NEAR(m.itl_ms.p90, 25, 1e-9);
  EXPECT_NEAR(m.itl_ms.p99, 29.5, 1e-9);
  EXPECT_NEAR(m.itl_ms.max, 30, 1e-9);

  EXPECT_EQ(m.e2el_ms.n, 3u);  // 150, 200, 140
  EXPECT_NEAR(m.e2el_ms.mean, 163.333333, 1e-5);
  EXPECT_NEAR(m.e2el_ms.p50, 150, 1e-9);
  EXPECT_NEAR(m.e2el_ms.p90, 190, 1e-9);
  EXPECT_NEAR(m.e2el_ms.p99, 199, 1e-9);

  EXPECT_EQ(m.max_concurrent_requests, 3u);        // at 100 ms: A, B and C
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 9);  // every token in the first second
}

TEST(BenchMetrics, GoodputCountsRequestsMeetingEverySlo) {
  Slo both;
  both.ttft_ms = 150;
  both.tpot_ms = 20;
  ServingMetrics m = serving_metrics(sample_log(), both);
  // A misses TPOT (25), B misses TTFT (200), C meets both.
  EXPECT_EQ(m.good_requests, 1u);
  EXPECT_DOUBLE_EQ(*m.request_goodput, 4.0);

  Slo tpot;
  tpot.tpot_ms = 20;  // B's single token counts as TPOT 0, as in vLLM
  m = serving_metrics(sample_log(), tpot);
  EXPECT_EQ(m.good_requests, 2u);
  EXPECT_DOUBLE_EQ(*m.request_goodput, 8.0);

  Slo e2el;
  e2el.e2el_ms = 145;
  EXPECT_EQ(serving_metrics(sample_log(), e2el).good_requests, 1u);
}

TEST(BenchMetrics, ClassSubsetKeepsTheRunsDuration) {
  const ServingMetrics m =
      serving_metrics(sample_log(), Slo{}, [](const RequestRecord& r) { return r.simple; });
  EXPECT_EQ(m.completed, 2u);  // A and C
  EXPECT_EQ(m.failed, 0u);
  EXPECT_DOUBLE_EQ(m.duration_s, 0.25);
  EXPECT_DOUBLE_EQ(m.request_throughput, 8.0);
  EXPECT_NEAR(m.ttft_ms.mean, 100, 1e-9);
}

TEST(BenchMetrics, EngineMetricsFromStepsAndCounters) {
  RunLog log = sample_log();
  log.end_ns = 100 * ms;
  // (t, dur, seqs, tokens, prefill, decode, waiting, running, kv)
  log.steps = {{0, 0, 0, 0, 0, 0, 1, 0, 0},
               {10 * ms, 20 * ms, 2, 30, 30, 0, 2, 2, 4},
               {40 * ms, 10 * ms, 2, 2, 0, 2, 0, 2, 4},
               {60 * ms, 10 * ms, 4, 4, 0, 4, 0, 4, 6}};
  log.counters = {{"prefix_cache_hit_tokens", 30},
                  {"prefix_cache_query_tokens", 120},
                  {"routing_ns", 4e6},
                  {"overlap_hidden_host_ns", 2e6},
                  {"expert_activations.0.0", 30},
                  {"expert_activations.0.1", 10},
                  {"expert_activations.1.0", 5},
                  {"expert_activations.1.1", 15},
                  {"expert_activations.x.1", 99}};  // malformed: ignored
  const EngineMetrics e = engine_metrics(log, 1000);
  EXPECT_EQ(e.steps, 3u);
  EXPECT_EQ(e.empty_steps, 1u);
  EXPECT_NEAR(e.busy_s, 0.04, 1e-12);
  EXPECT_NEAR(e.utilization, 0.4, 1e-12);
  // Waiting 1 for 10 ms, 2 for 30 ms, then 0 until 100 ms: 70 / 100.
  EXPECT_NEAR(e.queue_mean, 0.7, 1e-12);
  EXPECT_EQ(e.queue_max, 2u);
  EXPECT_EQ(e.batch_hist, (std::map<uint32_t, size_t>{{2, 2}, {4, 1}}));
  EXPECT_NEAR(e.batch_size.mean, 8.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(e.batch_size.p50, 2);
  EXPECT_EQ(e.prefill_tokens, 30u);
  EXPECT_EQ(e.decode_tokens, 6u);
  EXPECT_EQ(e.path_requests, (std::map<uint32_t, size_t>{{0, 2}, {1, 1}}));
  // 2 x 1000 x (13 + 21 + 35) tokens / 3 requests
  EXPECT_NEAR(e.flops_per_request, 46000, 1e-9);
  EXPECT_NEAR(e.cost_ms.mean, 6, 1e-9);
  EXPECT_NEAR(*e.prefix_cache_hit_rate, 0.25, 1e-12);
  EXPECT_NEAR(*e.routing_time_share, 0.1, 1e-12);
  EXPECT_NEAR(*e.overlap_hidden_share, 0.05, 1e-12);
  ASSERT_TRUE(e.experts);
  EXPECT_EQ(e.experts->counts.size(), 2u);
  EXPECT_NEAR(e.experts->max_share, 0.75, 1e-12);
  EXPECT_NEAR(e.experts->min_share, 0.25, 1e-12);
}

TEST(BenchMetrics, UnpublishedCountersStayUnset) {
  RunLog log = sample_log();
  EngineMetrics e = engine_metrics(log, 1000);
  EXPECT_FALSE(e.prefix_cache_hit_rate);
  EXPECT_FALSE(e.routing_time_share);
  EXPECT_FALSE(e.experts);
  log.counters = {{"prefix_cache_hit_tokens", 0}, {"prefix_cache_query_tokens", 0}};
  EXPECT_FALSE(engine_metrics(log, 1000).prefix_cache_hit_rate);  // nothing looked up: no rate
  // A variant after a triage variant sees the key with a zero delta: it did not route.
  log.counters = {{"routing_ns", 0}, {"overlap_hidden_host_ns", 0}};
  EXPECT_FALSE(engine_metrics(log, 1000).routing_time_share);
  EXPECT_FALSE(engine_metrics(log, 1000).overlap_hidden_share);
}

TEST(BenchCounters, DeltaCountsNewKeysFromZero) {
  const auto d = counter_delta({{"a", 1}, {"b", 5}}, {{"a", 4}, {"b", 5}, {"c", 2}});
  EXPECT_EQ(d, (std::map<std::string, double>{{"a", 3}, {"b", 0}, {"c", 2}}));
}
