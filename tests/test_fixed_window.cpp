// The original scheduler, tested on plans alone: fixed cap, fixed window, static batches.
#include <gtest/gtest.h>

#include "sched_harness.h"

using sy::test::SchedHarness;
using Plan = std::vector<std::pair<uint64_t, uint32_t>>;

namespace {

std::shared_ptr<sy::Plugin> plugin() {
  static sy::PluginHost host({SWITCHYARD_PLUGIN_DIR});
  static auto p = host.load(SY_PLUGIN_SCHEDULER, "fixed_window");
  return p;
}

constexpr int64_t kMs = 1'000'000;

}  // namespace

TEST(FixedWindow, WaitsForTheWindowWhenTheBatchIsNotFull) {
  sy::Scheduler s(plugin(), {{"max_batch", "4"}, {"wait_window_ms", "5"}});
  SchedHarness h;
  h.waiting = {SchedHarness::req(1, 10, 4, h.now_ns - 1 * kMs), SchedHarness::req(2, 12, 4, h.now_ns)};
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_TRUE(h.planned().empty());
  EXPECT_EQ(h.plan.wait_ns, 4 * kMs);  // the oldest has waited 1 ms of 5
  h.now_ns += 4 * kMs;
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 10}, {2, 12}}));
}

TEST(FixedWindow, AFullBatchRunsAtOnceAndTheCapHolds) {
  sy::Scheduler s(plugin(), {{"max_batch", "2"}, {"wait_window_ms", "1000"}});
  SchedHarness h;
  for (uint64_t i = 1; i <= 3; ++i) h.waiting.push_back(SchedHarness::req(i, 8, 2, h.now_ns));
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 8}, {2, 8}}));
}

TEST(FixedWindow, StaticBatchRunsToCompletionBeforeAdmittingMore) {
  sy::Scheduler s(plugin(), {{"max_batch", "2"}, {"wait_window_ms", "0"}});
  SchedHarness h;
  h.waiting = {SchedHarness::req(1, 8, 1, h.now_ns), SchedHarness::req(2, 8, 3, h.now_ns)};
  ASSERT_EQ(h.run(s), SY_OK);
  h.apply();  // both prefilled, each sampled a token
  h.waiting.push_back(SchedHarness::req(3, 4, 2, h.now_ns));
  // Request 1 is done (max_new 1): the engine retires it; 2 keeps decoding, 3 must wait.
  h.running.erase(h.running.begin());
  for (int step = 0; step < 2; ++step) {
    ASSERT_EQ(h.run(s), SY_OK);
    EXPECT_EQ(h.planned(), (Plan{{2, 1}})) << "step " << step;
    h.apply();
  }
  h.running.clear();  // 2 finished
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{3, 4}}));
}

TEST(FixedWindow, ReservesWholeRequestsInFifoOrder) {
  sy::Scheduler s(plugin(), {{"max_batch", "8"}, {"wait_window_ms", "0"}});
  SchedHarness h;
  h.free_blocks = 3;  // 48 token slots
  h.waiting = {SchedHarness::req(1, 20, 12, h.now_ns),   // 2 blocks
               SchedHarness::req(2, 30, 10, h.now_ns),   // 3 blocks: does not fit after 1
               SchedHarness::req(3, 4, 4, h.now_ns)};    // fits, but may not overtake 2
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 20}}));
}

TEST(FixedWindow, PrefillRespectsTheTokenBudget) {
  sy::Scheduler s(plugin(), {{"max_batch", "4"}, {"wait_window_ms", "0"}});
  SchedHarness h;
  h.max_batch_tokens = 50;
  h.waiting = {SchedHarness::req(1, 30, 2, h.now_ns), SchedHarness::req(2, 30, 2, h.now_ns)};
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 30}, {2, 20}}));
  h.apply();
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 1}, {2, 10}}));
}

TEST(FixedWindow, IdleQueueWaitsForArrivals) {
  sy::Scheduler s(plugin(), {});
  SchedHarness h;
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_TRUE(h.planned().empty());
  EXPECT_EQ(h.plan.wait_ns, INT64_MAX);
}

TEST(FixedWindow, RejectsBadParameters) {
  try {
    sy::Scheduler s(plugin(), {{"max_batch", "0"}});
    FAIL();
  } catch (const sy::PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "scheduler fixed_window: create: fixed_window: bad value '0' for max_batch");
  }
}
