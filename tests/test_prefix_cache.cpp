// Prefix caching: hash chains, copy-free sharing with reference counts, LRU eviction, and the
// engine reusing cached blocks without changing a single token.
#include <gtest/gtest.h>

#include "host/host_api.h"
#include "model/kv_cache.h"
#include "switchyard/common/error.h"
#include "tiny_model.h"

using sy::model::BlockPool;
using sy::model::block_hashes;

TEST(BlockHashes, ChainDependsOnEveryEarlierToken) {
  std::vector<int32_t> a(40), b(40);
  for (int i = 0; i < 40; ++i) a[i] = b[i] = i + 3;
  EXPECT_EQ(block_hashes(a.data(), a.size(), 16).size(), 2u);  // the partial block is not keyed
  EXPECT_EQ(block_hashes(a.data(), a.size(), 16), block_hashes(b.data(), b.size(), 16));
  b[3] = 99;  // a change in block 0 changes every later key
  const auto ha = block_hashes(a.data(), a.size(), 16), hb = block_hashes(b.data(), b.size(), 16);
  EXPECT_NE(ha[0], hb[0]);
  EXPECT_NE(ha[1], hb[1]);
  b[3] = a[3];
  b[20] = 99;  // a change in block 1 leaves block 0's key alone
  EXPECT_EQ(block_hashes(b.data(), b.size(), 16)[0], ha[0]);
}

TEST(BlockPool, SharedBlocksAreReferenceCountedAndFreedToZero) {
  BlockPool pool(8);
  std::vector<int32_t> a, b;
  ASSERT_TRUE(pool.allocate(3, a));
  const std::vector<sy::model::BlockHash> chain = {11, 22, 33};
  for (int i = 0; i < 3; ++i) pool.publish(a[i], chain[i]);
  EXPECT_EQ(pool.match(chain, 3), 3u);
  pool.acquire_cached(chain, 2, b);  // b shares a's first two blocks, copy-free
  EXPECT_EQ(b, (std::vector<int32_t>{a[0], a[1]}));
  EXPECT_EQ(pool.ref_count(a[0]), 2u);
  EXPECT_EQ(pool.ref_count(a[2]), 1u);
  pool.release(a);
  EXPECT_EQ(pool.ref_count(b[0]), 1u);
  EXPECT_EQ(pool.free_count(), 6u);  // a's third block is cached and evictable, b holds two
  EXPECT_EQ(pool.cached_free_count(), 1u);
  pool.release(b);
  for (int32_t blk = 0; blk < 8; ++blk) EXPECT_EQ(pool.ref_count(blk), 0u);
  EXPECT_EQ(pool.free_count(), 8u);
  EXPECT_EQ(pool.match(chain, 3), 3u);  // still cached after everyone released
  EXPECT_THROW(pool.release(b = {0}), sy::Bug);
}

TEST(BlockPool, EvictsLeastRecentlyReleasedCachedBlocksOnlyWhenPlainBlocksRunOut) {
  BlockPool pool(4);
  std::vector<int32_t> x, y;
  ASSERT_TRUE(pool.allocate(2, x));
  pool.publish(x[0], 100);
  pool.publish(x[1], 200);
  ASSERT_TRUE(pool.allocate(2, y));
  pool.publish(y[0], 300);
  pool.release(x);  // released first: evicted first (x's tail before its head)
  pool.release(y);
  std::vector<int32_t> z;
  ASSERT_TRUE(pool.allocate(1, z));  // the one plain free block (y[1] was never keyed)
  EXPECT_EQ(pool.evictions(), 0u);
  ASSERT_TRUE(pool.allocate(1, z));
  EXPECT_EQ(pool.evictions(), 1u);
  EXPECT_EQ(pool.match({200}, 1), 0u) << "x's tail goes first";
  EXPECT_EQ(pool.match({100}, 1), 1u);
  EXPECT_EQ(pool.match({300}, 1), 1u);
  EXPECT_FALSE(pool.allocate(3, z));
  EXPECT_EQ(z.size(), 2u) << "a failed allocation takes nothing";
}

TEST(BlockPool, PublishingAKnownKeyKeepsTheFirstBlock) {
  BlockPool pool(4);
  std::vector<int32_t> a, b, c;
  ASSERT_TRUE(pool.allocate(1, a));
  ASSERT_TRUE(pool.allocate(1, b));
  pool.publish(a[0], 7);
  pool.publish(b[0], 7);
  pool.acquire_cached({7}, 1, c);
  EXPECT_EQ(c[0], a[0]);
}

namespace {

// Eight requests: half share a 48-token system prompt, lengths vary so chunks cross blocks.
std::vector<std::vector<int32_t>> shared_prefix_prompts() {
  const auto system = sy::test::sample_tokens(48, 259, 7);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 8; ++i) {
    auto tail = sy::test::sample_tokens(5 + 7 * i, 259, 20 + i);
    std::vector<int32_t> p = i % 2 ? std::vector<int32_t>{} : system;
    p.insert(p.end(), tail.begin(), tail.end());
    prompts.push_back(p);
  }
  return prompts;
}

}  // namespace

TEST(PrefixCachingEngine, ReusesSharedPrefixesWithoutChangingTokens) {
  const auto prompts = shared_prefix_prompts();
  sy::test::EngineRun plain;
  plain.scheduler = "dynamic";
  const auto want = plain.run(prompts);
  sy::test::EngineRun cached = plain;
  cached.limits.prefix_caching = true;
  cached.params = {{"max_num_seqs", "1"}};  // one at a time: later ones find the cache warm
  const auto before = sy::host_counters();
  const auto got = cached.run(prompts);
  EXPECT_EQ(got, want);
  // Requests 2, 4, 6 each reuse the 3 full blocks of the system prompt (48 tokens).
  EXPECT_EQ(cached.prefix_hit_tokens, 3u * 48u);
  const auto after = sy::host_counters();
  EXPECT_EQ(after.at("prefix_cache_hit_tokens") - (before.count("prefix_cache_hit_tokens") ? before.at("prefix_cache_hit_tokens") : 0), 144.0);
}

TEST(PrefixCachingEngine, ConcurrentRequestsShareBlocksAndFreeThemAll) {
  // Run them together: the first prefill publishes, a later admission shares; EngineRun checks
  // every block is back in the pool (reference counts at zero) once all requests finish.
  const auto prompts = shared_prefix_prompts();
  sy::test::EngineRun plain;
  const auto want = plain.run(prompts);
  sy::test::EngineRun cached;
  cached.scheduler = "dynamic";
  cached.limits.prefix_caching = true;
  cached.limits.max_batch_tokens = 64;  // staggered prefills: early ones publish first
  EXPECT_EQ(cached.run(prompts), want);
  EXPECT_GT(cached.prefix_hit_tokens, 0u);
}
