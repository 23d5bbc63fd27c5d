// A scheduler plugin that returns an invalid plan (or fails) is caught by the host's plan
// validator: the step runs on the host's fallback plan, the fault is logged and counted, and
// every request still gets the tokens a trusted scheduler gives it.
#include <gtest/gtest.h>

#include "engine_run.h"
#include "host/scheduler.h"

namespace fs = std::filesystem;
using sy::test::counter;

namespace {

sy::PluginHost& host() {
  static sy::PluginHost h({SWITCHYARD_FAULT_PLUGIN_DIR, SWITCHYARD_PLUGIN_DIR});
  return h;
}

// Six requests, two at a time: requests wait for many steps, so faults keep finding targets.
sy::engine::EngineLimits limits(uint32_t max_batch_tokens) {
  sy::engine::EngineLimits lim;
  lim.max_seqs = 2;
  lim.max_batch_tokens = max_batch_tokens;
  return lim;
}

sy::test::RunResult run(sy::Scheduler& s, uint32_t max_batch_tokens) {
  sy::test::TinyModel m(host().load(SY_PLUGIN_BACKEND, "cpu_ref"));
  return sy::test::run_tiny(m, s, sy::test::tiny_prompts(6), 8, limits(max_batch_tokens));
}

struct FaultCase {
  const char* fault;
  uint32_t max_batch_tokens;
  const char* first_error;  // what the engine logs for the first faulty plan (call 1)
};

void PrintTo(const FaultCase& c, std::ostream* os) {
  *os << c.fault;
}

class InvalidPlan : public testing::TestWithParam<FaultCase> {};

}  // namespace

// Faults on calls 1, 4, 7, ...; the first call sees all six requests waiting.
TEST_P(InvalidPlan, IsCaughtCountedLoggedAndTheEngineKeepsTheTokens) {
  const FaultCase& c = GetParam();
  sy::Scheduler fw(host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
  const auto want = run(fw, c.max_batch_tokens);
  ASSERT_EQ(want.invalid_plans, 0u);

  sy::Scheduler bad(host().load(SY_PLUGIN_SCHEDULER, "bad_plan"),
                    {{"fault", c.fault}, {"from_call", "1"}, {"every", "3"}});
  const double faults0 = counter("bad_plan_faults"), invalid0 = counter("scheduler_invalid_plans");
  sy::test::LogCapture log;
  const auto got = run(bad, c.max_batch_tokens);

  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_TRUE(got.all_finished_by_length);
  EXPECT_GE(got.invalid_plans, 2u) << "the fault should recur over the run";
  EXPECT_EQ(double(got.invalid_plans), counter("bad_plan_faults") - faults0);
  EXPECT_EQ(double(got.invalid_plans), counter("scheduler_invalid_plans") - invalid0);
  const auto lines = log.lines("fallback plan");
  ASSERT_EQ(lines.size(), got.invalid_plans);
  EXPECT_EQ(lines[0], std::string("error: scheduler bad_plan: ") + c.first_error +
                          "; running the host's fallback plan for this step");
}

INSTANTIATE_TEST_SUITE_P(
    Faults, InvalidPlan,
    testing::Values(FaultCase{"unknown_id", 2048, "entry 2: unknown request id 999999"},
                    FaultCase{"over_budget", 24, "plan carries 81 tokens, over the budget of 24"},
                    FaultCase{"twice", 2048, "entry 2: request 1 scheduled twice"},
                    FaultCase{"preempt_waiting", 2048, "preempt 0: request 6 is not running"},
                    FaultCase{"plan_error", 2048,
                              "plan failed: bad_plan: injected failure on call 1"}),
    [](const auto& info) { return std::string(info.param.fault); });

// The control: the same plugin without faults plans validly, so the counts above are its faults.
TEST(InvalidPlan, NoFaultMeansNoRejectedPlan) {
  sy::Scheduler fw(host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
  sy::Scheduler good(host().load(SY_PLUGIN_SCHEDULER, "bad_plan"), {{"fault", "none"}});
  sy::test::LogCapture log;
  const auto got = run(good, 24);
  EXPECT_EQ(got.invalid_plans, 0u);
  EXPECT_TRUE(log.lines("fallback plan").empty());
  EXPECT_EQ(got.tokens, run(fw, 24).tokens);
}
