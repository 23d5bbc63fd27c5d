// Changing the scheduler never changes the tokens a request gets under greedy decoding: every
// feature combination of the optimized scheduler, with and without prefix caching and overlapped
// stepping, against the original scheduler, on a workload that forces chunking, preemption and
// prefix reuse; and on jamba and mamba with hybrid prefix caching (state snapshots).
#include <gtest/gtest.h>

#include "engine_workload.h"

namespace {

const std::vector<std::vector<int32_t>>& baseline() {
  static const auto out = [] {
    sy::test::EngineRun run;
    run.params = {{"max_batch", "4"}, {"wait_window_ms", "0"}};
    run.max_new = 16;
    return run.run(sy::test::chunked_prefix_workload());
  }();
  return out;
}

}  // namespace

class SchedulerEquivalence : public testing::TestWithParam<int> {};

TEST_P(SchedulerEquivalence, GreedyTokensEqualTheOriginalScheduler) {
  const int bits = GetParam();
  const char* names[] = {"chunked_prefill", "adaptive", "preemption", "priority",
                         "prefix_ordering"};
  sy::test::EngineRun run;
  run.scheduler = "dynamic";
  for (int i = 0; i < 5; ++i) run.params.emplace_back(names[i], bits & (1 << i) ? "true" : "false");
  run.limits.prefix_caching = bits & (1 << 5);
  run.limits.overlap = bits & (1 << 6);
  run.limits.max_batch_tokens = 48;  // forces chunks of the 70+ token prompts
  run.kv_blocks = 16;                // 256 slots for ~10 x 100 tokens: forces preemption
  run.max_new = 16;
  const auto got = run.run(sy::test::chunked_prefix_workload());
  const auto& want = baseline();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  if (bits & (1 << 2)) RecordProperty("preemptions", std::to_string(run.preemptions));
}

std::string combination_name(const testing::TestParamInfo<int>& info) {
  static const char* const kTags[] = {"chunk", "adapt", "preempt", "prio",
                                      "lpm",   "cache", "overlap"};
  std::string n;
  for (int i = 0; i < 7; ++i)
    if (info.param & (1 << i)) n += std::string(n.empty() ? "" : "_") + kTags[i];
  return n.empty() ? std::string("none") : n;
}

INSTANTIATE_TEST_SUITE_P(AllFeatureCombinations, SchedulerEquivalence, testing::Range(0, 128),
                         combination_name);

namespace {

// The optimized scheduler with prefix caching, a small token budget and few KV blocks, planning
// without timing: the run the "really preempts" tests check.
sy::test::EngineRun preempting_run(uint32_t kv_blocks, uint32_t max_new) {
  sy::test::EngineRun run;
  run.scheduler = "dynamic";
  run.params = sy::test::dynamic_timing_free();
  run.limits.prefix_caching = true;
  run.limits.max_batch_tokens = 48;
  run.kv_blocks = kv_blocks;
  run.max_new = max_new;
  return run;
}

}  // namespace

TEST(SchedulerEquivalence, TheWorkloadReallyPreemptsAndReusesPrefixes) {
  sy::test::EngineRun run = preempting_run(16, 16);
  EXPECT_EQ(run.run(sy::test::chunked_prefix_workload()), baseline());
  EXPECT_GT(run.preemptions, 0u);
  EXPECT_GT(run.prefix_hit_tokens, 0u);
}

// The same on models with recurrent layers, with prefix caching on (state snapshots at block
// boundaries, restored on a hit): jamba and mamba, the optimized scheduler's chunking,
// preemption and prefix ordering, overlapped stepping, and both snapshot policies, against the
// original scheduler without any cache.
class HybridSchedulerEquivalence : public testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(HybridSchedulerEquivalence, CachedGreedyTokensEqualTheOriginalUncached) {
  const auto& [preset, bits] = GetParam();
  sy::test::EngineRun run;
  run.model = sy::test::preset_model_file(preset);
  run.scheduler = "dynamic";
  run.params = {{"chunked_prefill", bits & 1 ? "true" : "false"},
                {"preemption", bits & 2 ? "true" : "false"},
                {"prefix_ordering", bits & 4 ? "true" : "false"}};
  run.limits.prefix_caching = true;
  run.limits.overlap = bits & 8;
  run.limits.state_cache = bits & 16 ? sy::engine::StateCache::last : sy::engine::StateCache::all;
  run.limits.max_batch_tokens = 48;
  run.kv_blocks = 10;
  run.max_new = 12;
  const auto got = run.run(sy::test::chunked_prefix_workload());
  const auto& want = sy::test::original_tokens(preset);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  if (!(bits & 16)) EXPECT_GT(run.prefix_hit_tokens, 0u) << "no request resumed from a snapshot";
  if (bits & 2) RecordProperty("preemptions", std::to_string(run.preemptions));
}

// The hybrid suite's workload really preempts requests that resumed from a snapshot, and
// re-admits them on their cached prefix (plans that do not depend on timing).
TEST(HybridSchedulerEquivalence, TheWorkloadReallyPreemptsAndResumesFromSnapshots) {
  for (const std::string preset : {"hybrid-tiny", "mamba-tiny", "mamba2-tiny", "qwen35moe-tiny"}) {
    SCOPED_TRACE(preset);
    sy::test::EngineRun run = preempting_run(10, 12);
    run.model = sy::test::preset_model_file(preset);
    EXPECT_EQ(run.run(sy::test::chunked_prefix_workload()), sy::test::original_tokens(preset));
    EXPECT_GT(run.preemptions, 0u);
    EXPECT_GT(run.prefix_hit_tokens, 0u);
    EXPECT_GT(run.counters["state_cache_restores"], 0);
  }
}

std::string hybrid_combination_name(
    const testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  static const char* const kTags[] = {"chunk", "preempt", "lpm", "overlap", "last"};
  const std::string& preset = std::get<0>(info.param);
  std::string n = preset == "hybrid-tiny"  ? "jamba"
                  : preset == "mamba-tiny" ? "mamba"
                                           : preset.substr(0, preset.rfind("-tiny"));
  for (char& c : n)
    if (c == '-') c = '_';
  for (int i = 0; i < 5; ++i)
    if (std::get<1>(info.param) & (1 << i)) n += std::string("_") + kTags[i];
  return n;
}

INSTANTIATE_TEST_SUITE_P(JambaMamba, HybridSchedulerEquivalence,
                         testing::Combine(testing::Values("hybrid-tiny", "mamba-tiny"),
                                          testing::Range(0, 32)),
                         hybrid_combination_name);

// The 2026 recurrences: Mamba-2 (alone, and with attention and MoE in Nemotron-H) and the gated
// delta net (Qwen3.5 MoE, Qwen3-Next), every combination; LFM2's short convolution (with a
// sliding window) and Falcon-H1's parallel attention and Mamba-2 on a spread of them.
INSTANTIATE_TEST_SUITE_P(Families2026, HybridSchedulerEquivalence,
                         testing::Combine(testing::Values("mamba2-tiny", "nemotron-h-tiny",
                                                          "qwen35moe-tiny", "qwen3next-tiny"),
                                          testing::Range(0, 32)),
                         hybrid_combination_name);
INSTANTIATE_TEST_SUITE_P(Families2026Spread, HybridSchedulerEquivalence,
                         testing::Combine(testing::Values("lfm2-tiny", "falcon-h1-tiny",
                                                          "granitehybrid-tiny"),
                                          testing::Values(0, 7, 11, 21, 31)),
                         hybrid_combination_name);
