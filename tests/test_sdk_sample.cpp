// samples/scheduler_priority: a scheduler written on the C++ plugin SDK, built against sdk/ and
// abi/ only, loaded by the host's plugin loader. Its plans, its typed options (unknown keys and
// bad values refused with the plugin's message), and the SDK's boundary: an exception thrown in
// plan() reaches the host as a status and that handle's last_error, and create errors do not
// leak into a live handle's.
#include <gtest/gtest.h>

#include "host/plugin_host.h"
#include "sched_harness.h"

using sy::test::SchedHarness;
using Plan = std::vector<std::pair<uint64_t, uint32_t>>;

namespace {

std::shared_ptr<sy::Plugin> plugin() {
  static sy::PluginHost host({SWITCHYARD_SDK_SAMPLE_DIR});
  static auto p = host.load(SY_PLUGIN_SCHEDULER, "priority");
  return p;
}

std::string create_error(const sy::Params& params) {
  try {
    sy::Scheduler s(plugin(), params);
  } catch (const sy::PluginError& e) {
    return e.what();
  }
  return "";
}

sy_sched_request with_priority(sy_sched_request r, int32_t priority) {
  r.priority = priority;
  return r;
}

}  // namespace

TEST(SdkSample, HandshakeFromTheSdk) {
  EXPECT_EQ(plugin()->name(), "priority");
  EXPECT_EQ(plugin()->version(), "1.0.0");
  EXPECT_EQ(plugin()->abi_version(), SY_ABI_VERSION);
  EXPECT_EQ(plugin()->capabilities(), uint64_t(SY_CAP_CHUNKED_PREFILL));
}

TEST(SdkSample, HigherPriorityFirstThenArrival) {
  sy::Scheduler s(plugin(), {{"max_batch", "2"}});
  SchedHarness h;
  h.waiting = {with_priority(SchedHarness::req(1, 10, 4, h.now_ns - 3), 0),
               with_priority(SchedHarness::req(2, 12, 4, h.now_ns - 2), 5),
               with_priority(SchedHarness::req(3, 14, 4, h.now_ns - 1), 5)};
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{2, 12}, {3, 14}}));  // max_batch 2: request 1 waits
  h.apply();
  ASSERT_EQ(h.run(s), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{2, 1}, {3, 1}}));
}

TEST(SdkSample, ChunkedPrefillOption) {
  SchedHarness h;
  h.max_batch_tokens = 20;
  h.waiting = {SchedHarness::req(1, 8, 2, h.now_ns), SchedHarness::req(2, 30, 2, h.now_ns)};
  sy::Scheduler chunked(plugin(), {});
  ASSERT_EQ(h.run(chunked), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 8}, {2, 12}}));
  // Unchunked, a 16-token prompt that a whole step could hold waits for one rather than split.
  h.waiting[1] = SchedHarness::req(2, 16, 2, h.now_ns);
  sy::Scheduler whole(plugin(), {{"chunked_prefill", "false"}});
  ASSERT_EQ(h.run(whole), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 8}}));
}

TEST(SdkSample, TypedOptionsRefuseUnknownKeysAndBadValues) {
  EXPECT_EQ(create_error({{"max_batches", "4"}}),
            "scheduler priority: create: priority: unknown parameter 'max_batches' (known: "
            "max_batch, chunked_prefill)");
  EXPECT_EQ(create_error({{"max_batch", "0"}}),
            "scheduler priority: create: priority: bad value '0' for max_batch");
  EXPECT_EQ(create_error({{"chunked_prefill", "yes"}}),
            "scheduler priority: create: priority: bad value 'yes' for chunked_prefill");
  EXPECT_EQ(create_error({{"max_batch", "65536"}, {"chunked_prefill", "0"}}), "");
}

TEST(SdkSample, AThrowInPlanIsAStatusAndTheHandlesLastError) {
  sy::Scheduler broken(plugin(), {});
  sy::Scheduler fine(plugin(), {});
  SchedHarness h;
  h.waiting = {SchedHarness::req(1, 8, 2, h.now_ns)};
  h.block_size = 0;  // the policy throws sy::plugin::Error
  std::string error;
  EXPECT_EQ(h.run(broken, &error), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error, "priority: the view has kv_block_size 0");
  // A failed create in between does not touch either handle's message.
  EXPECT_NE(create_error({{"nope", "1"}}), "");
  h.block_size = 16;
  EXPECT_EQ(h.run(fine, &error), SY_OK);
  EXPECT_EQ(h.planned(), (Plan{{1, 8}}));
}
