// The sliding-window layers' own KV pool: each sequence holds only its window there, giving
// back blocks as it advances, and greedy tokens are those of the full cache on every family with
// sliding-window layers, under chunking, preemption and overlapped stepping.
#include <gtest/gtest.h>

#include <numeric>

#include "engine_workload.h"
#include "model/flat_batch.h"
#include "switchyard/common/error.h"

namespace {

using sy::model::KvCache;
using sy::model::WindowPool;

// A cache over cpu_ref: layers 0 and 2 see a window of 20 positions, layer 1 every position.
struct WindowedCache {
  std::unique_ptr<sy::Backend> backend;
  std::unique_ptr<KvCache> cache;
  explicit WindowedCache(uint32_t window_blocks, uint32_t blocks = 32) {
    backend = std::make_unique<sy::Backend>(sy::test::host().load(SY_PLUGIN_BACKEND, "cpu_ref"),
                                            sy::Params{});
    cache = std::make_unique<KvCache>(*backend, std::vector<uint32_t>{8, 8, 8}, 4, blocks,
                                      SY_DTYPE_F32, WindowPool{{20, 0, 20}, window_blocks});
  }
};

}  // namespace

TEST(WindowPool, LayersWithAWindowTakeTheirRowsFromTheirOwnPool) {
  WindowedCache w(10);
  const KvCache& c = *w.cache;
  EXPECT_TRUE(c.windowed(0));
  EXPECT_FALSE(c.windowed(1));
  EXPECT_EQ(c.window(), 20u);
  EXPECT_EQ(c.k(0).ne[1], 40);                                // 10 blocks of 4
  EXPECT_EQ(c.k(1).ne[1], 128);                               // 32 blocks of 4
  EXPECT_EQ(c.bytes_per_block(), 2u * 4 * 8 * 4);             // K and V of one F32 layer
  EXPECT_EQ(c.bytes_per_window_block(), 2u * 2 * 4 * 8 * 4);  // of two
  EXPECT_EQ(c.bytes(), 32 * c.bytes_per_block() + 10 * c.bytes_per_window_block());
}

TEST(WindowPool, WithoutAPoolEveryLayerKeepsEveryPosition) {
  WindowedCache w(0);
  EXPECT_FALSE(w.cache->windowed());
  EXPECT_FALSE(w.cache->windowed(0));
  EXPECT_EQ(w.cache->k(0).ne[1], 128);
  EXPECT_EQ(w.cache->bytes(), 32 * w.cache->bytes_per_block());
}

// Window 20, blocks of 4: position p sees [p - 19, p].
TEST(WindowPool, AdvancingGivesBackTheBlocksBeforeTheWindow) {
  WindowedCache w(10);
  KvCache& c = *w.cache;
  std::vector<int32_t> table;
  ASSERT_TRUE(c.advance_window(table, 0, 24));  // a 24-token prompt: blocks 0..5
  EXPECT_EQ(table.size(), 6u);
  EXPECT_EQ(c.window_pool().free_count(), 4u);
  // Decoding position 24 sees [5, 24]: block 0 (positions 0..3) goes back, block 6 comes.
  ASSERT_TRUE(c.advance_window(table, 24, 25));
  ASSERT_EQ(table.size(), 7u);
  EXPECT_EQ(table[0], -1);
  EXPECT_TRUE(std::all_of(table.begin() + 1, table.end(), [](int32_t b) { return b >= 0; }));
  EXPECT_EQ(c.window_pool().free_count(), 4u);
  // Position 27 sees [8, 27]: blocks 0 and 1 are gone, nothing new.
  ASSERT_TRUE(c.advance_window(table, 27, 28));
  EXPECT_EQ(table.size(), 7u);
  EXPECT_EQ(table[1], -1);
  EXPECT_EQ(c.window_pool().free_count(), 5u);
  c.release_window(table);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(c.window_pool().free_count(), 10u);
}

TEST(WindowPool, AShortPoolRefusesAndKeepsTheTable) {
  WindowedCache w(3);
  KvCache& c = *w.cache;
  std::vector<int32_t> table;
  EXPECT_FALSE(c.advance_window(table, 0, 16));  // 4 blocks of 3
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(c.window_pool().free_count(), 3u);
}

// Per sequence its window (rounded up, plus the two partial blocks at its ends), plus one pass's
// tokens over all sequences.
TEST(WindowPool, ItsSizeCoversEverySequencesWindowAndOnePass) {
  EXPECT_EQ(KvCache::window_pool_size(20, 4, 3, 48), 3u * (5 + 2) + 12);
  EXPECT_EQ(KvCache::window_pool_size(4096, 16, 16, 2048), 16u * (256 + 2) + 128);
}

TEST(WindowPool, ThePassNeedsAWindowTableThatCoversItsWindow) {
  const std::vector<int32_t> toks(4, 1), blocks(7, 0);
  std::vector<int32_t> window = {-1, 0, 1, 2, 3, 4, 5};
  sy::model::SeqInput in{toks.data(), 4, 24, &blocks, true, 0};
  EXPECT_THROW(sy::model::flatten_batch({in}, 4, 10, false, true, 20), sy::Bug);
  in.window_blocks = &window;  // position 24 sees [5, 27]: blocks 1..6
  const auto bt = sy::model::flatten_batch({in}, 4, 10, false, true, 20);
  EXPECT_EQ(bt.window_slots, (std::vector<int32_t>{20, 21, 22, 23}));  // block 5 at index 6
  EXPECT_EQ(bt.window_tables[0], 0);  // a given-back block reads as block 0
  window[1] = -1;
  try {
    sy::model::flatten_batch({in}, 4, 10, false, true, 20);
    FAIL() << "a window table without block 1 was accepted";
  } catch (const sy::Bug& e) {
    EXPECT_STREQ(e.what(), "forward: sequence's sliding-window table lacks a block of its window");
  }
}

TEST(WindowPool, TheEngineRefusesAPoolThatCouldRunShortAndPrefixCaching) {
  sy::test::Loaded m(sy::test::preset_model_file("gemma2-tiny"), "cpu_ref", 64, SY_DTYPE_F32, {}, 4,
                     10);
  sy::Scheduler s(sy::test::host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {});
  sy::engine::EngineLimits lim;
  lim.max_seqs = 4;
  lim.max_batch_tokens = 48;  // needs 4 * (1 + 2) + 3 = 15 blocks
  try {
    sy::engine::Engine e(*m.model, *m.cache, s, lim);
    FAIL() << "a pool of 10 blocks was accepted";
  } catch (const sy::Error& e) {
    EXPECT_STREQ(e.what(), "the sliding-window KV pool has 10 blocks; 4 sequences need 15");
  }
  lim.max_seqs = 2;  // 9 blocks
  lim.prefix_caching = true;
  try {
    sy::engine::Engine e(*m.model, *m.cache, s, lim);
    FAIL() << "prefix caching was accepted";
  } catch (const sy::Error& e) {
    EXPECT_STREQ(e.what(), "prefix caching needs the sliding-window layers' full cache");
  }
}

class WindowCacheEquivalence : public testing::TestWithParam<std::tuple<std::string, int>> {};

// With chunks of 48 tokens, four sequences at once get 15 window blocks of 16 positions while
// their prompts (46 to 110 tokens) and outputs span up to 8 each: the pool only suffices because
// blocks go back as sequences advance.
TEST_P(WindowCacheEquivalence, GreedyTokensEqualTheFullCache) {
  const auto& [preset, bits] = GetParam();
  sy::test::EngineRun run;
  run.model = sy::test::preset_model_file(preset);
  run.window_cache = true;
  run.scheduler = bits & 1 ? "dynamic" : "fixed_window";
  run.params = bits & 1 ? sy::Params{{"chunked_prefill", "true"},
                                     {"preemption", bits & 2 ? "true" : "false"}}
                        : sy::Params{{"max_batch", "4"}, {"wait_window_ms", "0"}};
  run.limits.max_seqs = 4;
  run.limits.max_batch_tokens = bits & 1 ? 48 : 2048;
  run.limits.overlap = bits & 4;
  run.kv_blocks = bits & 2 ? 16 : 64;  // 16: preempts
  run.max_new = 12;
  const auto got = run.run(sy::test::chunked_prefix_workload());
  const auto& want = sy::test::original_tokens(preset);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  const uint32_t pool = sy::model::KvCache::window_pool_size(8, 16, 4, run.limits.max_batch_tokens);
  EXPECT_LE(run.peak_window_blocks, pool);
  EXPECT_GT(run.peak_window_blocks, 0u);
}

std::string window_combination_name(
    const testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  static const char* const kTags[] = {"chunk", "preempt", "overlap"};
  std::string n = std::get<0>(info.param);
  n = n.substr(0, n.rfind("-tiny"));
  for (char& c : n)
    if (c == '-') c = '_';
  for (int i = 0; i < 3; ++i)
    if (std::get<1>(info.param) & (1 << i)) n += std::string("_") + kTags[i];
  return n;
}

INSTANTIATE_TEST_SUITE_P(SlidingWindowFamilies, WindowCacheEquivalence,
                         testing::Combine(testing::Values("gemma2-tiny", "gemma3-tiny",
                                                          "gemma4-tiny", "gemma4e-tiny",
                                                          "gpt-oss-tiny", "lfm2-tiny"),
                                          testing::Values(0, 1, 3, 5, 7)),
                         window_combination_name);
