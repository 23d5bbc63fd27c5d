// Out-of-process scheduling: the plugin runs in switchyard-plugin-runner. It plans exactly as it
// would in process, is refused for the same reasons, and when it crashes or hangs the engine
// falls back for the step, restarts the child (a bounded number of times) and keeps serving.
#include <gtest/gtest.h>

#include "config/config.h"
#include "engine_run.h"
#include "host/plan_wire.h"
#include "host/process_scheduler.h"
#include "switchyard/common/error.h"

namespace fs = std::filesystem;
using sy::test::counter;

namespace {

const fs::path kFaults = SWITCHYARD_FAULT_PLUGIN_DIR;
const fs::path kBadPlan = kFaults / "switchyard_scheduler_bad_plan.so";
const fs::path kFixedWindow =
    fs::path(SWITCHYARD_PLUGIN_DIR) / "switchyard_scheduler_fixed_window.so";

sy::ProcessOptions options(uint32_t max_restarts = 3, int64_t plan_timeout_ms = 5000) {
  sy::ProcessOptions o;
  o.runner = SWITCHYARD_RUNNER;
  o.max_restarts = max_restarts;
  o.plan_timeout_ms = plan_timeout_ms;
  return o;
}

sy::test::RunResult run(sy::Scheduler& s) {
  static sy::PluginHost host({SWITCHYARD_PLUGIN_DIR});
  sy::test::TinyModel m(host.load(SY_PLUGIN_BACKEND, "cpu_ref"));
  sy::engine::EngineLimits lim;
  lim.max_seqs = 2;
  return sy::test::run_tiny(m, s, sy::test::tiny_prompts(6), 8, lim);
}

const sy::test::RunResult& reference() {
  static const sy::test::RunResult r = [] {
    sy::PluginHost host({SWITCHYARD_PLUGIN_DIR});
    sy::Scheduler fw(host.load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
    return run(fw);
  }();
  return r;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const sy::PluginError& e) {
    return e.what();
  }
  return "accepted";
}

const char* kFallback = "; running the host's fallback plan for this step";

}  // namespace

TEST(ProcessScheduler, PlansLikeTheSamePluginInProcess) {
  auto s = sy::make_process_scheduler(kFixedWindow, {{"wait_window_ms", "0"}}, options());
  EXPECT_EQ(s->name(), "fixed_window");
  EXPECT_FALSE(s->in_process());
  try {
    s->plugin();
    FAIL() << "an isolated scheduler has no in-process plugin";
  } catch (const sy::Bug& e) {
    EXPECT_EQ(std::string(e.what()),
              "scheduler fixed_window runs in a child process, not in this one");
  }
  const auto got = run(*s);
  EXPECT_EQ(got.invalid_plans, 0u);
  EXPECT_TRUE(got.all_finished_by_length);
  EXPECT_EQ(got.tokens, reference().tokens);
}

TEST(ProcessScheduler, RunsAPluginBuiltForTheOlderMinor) {
  const fs::path p = fs::path(SWITCHYARD_ABI_FIXTURE_DIR) / "switchyard_scheduler_v1_0_fcfs.so";
  auto s = sy::make_process_scheduler(p, {}, options());
  EXPECT_EQ(s->name(), "v1_0_fcfs");
  const auto got = run(*s);
  EXPECT_EQ(got.invalid_plans, 0u);
  EXPECT_EQ(got.tokens, reference().tokens);
}

TEST(ProcessScheduler, RefusesWithTheMessagesOfAnInProcessLoad) {
  sy::PluginHost host({SWITCHYARD_PLUGIN_DIR});
  const fs::path major = fs::path(SWITCHYARD_TEST_PLUGIN_DIR) / "switchyard_scheduler_bad_major.so";
  const std::string in_process = refusal([&] { host.load_file(major); });
  EXPECT_NE(in_process.find("ABI major version mismatch"), std::string::npos) << in_process;
  EXPECT_EQ(refusal([&] { sy::make_process_scheduler(major, {}, options()); }), in_process);

  const sy::Params typo = {{"max_batchh", "4"}};
  const std::string create_in_process =
      refusal([&] { sy::Scheduler(host.load_file(kFixedWindow), typo); });
  EXPECT_EQ(create_in_process,
            "scheduler fixed_window: create: fixed_window: unknown parameter 'max_batchh' "
            "(known: max_batch, wait_window_ms)");
  EXPECT_EQ(refusal([&] { sy::make_process_scheduler(kFixedWindow, typo, options()); }),
            create_in_process);

  sy::ProcessOptions no_runner = options();
  no_runner.runner = "/nonexistent/switchyard-plugin-runner";
  EXPECT_EQ(refusal([&] { sy::make_process_scheduler(kFixedWindow, {}, no_runner); }),
            "plugin " + kFixedWindow.string() +
                ": cannot run it in a child process: no runner at "
                "/nonexistent/switchyard-plugin-runner");
}

// Each child segfaults on its third plan call and is restarted: every crash costs one step.
TEST(ProcessScheduler, CrashingPluginIsRestartedAndTheEngineKeepsServing) {
  auto s =
      sy::make_process_scheduler(kBadPlan, {{"fault", "crash"}, {"from_call", "3"}}, options(100));
  const double failures0 = counter("scheduler_process_failures");
  const double restarts0 = counter("scheduler_process_restarts");
  const double calls0 = counter("bad_plan_calls");
  sy::test::LogCapture log;
  const auto got = run(*s);
  EXPECT_EQ(got.tokens, reference().tokens);
  EXPECT_TRUE(got.all_finished_by_length);

  const double failures = counter("scheduler_process_failures") - failures0;
  const double restarts = counter("scheduler_process_restarts") - restarts0;
  const double ok_calls = counter("bad_plan_calls") - calls0;  // crashed calls report nothing
  EXPECT_GE(failures, 2);
  EXPECT_EQ(double(got.invalid_plans), failures);
  EXPECT_TRUE(restarts == failures || restarts == failures - 1) << restarts << " " << failures;
  // Two good calls per child before its crash; the last child may not have reached its third.
  EXPECT_GE(ok_calls, 2 * failures);
  EXPECT_LE(ok_calls, 2 * failures + 2);
  EXPECT_EQ(double(got.steps), ok_calls + failures);

  const auto crashes = log.lines("fallback plan");
  ASSERT_EQ(crashes.size(), got.invalid_plans);
  EXPECT_EQ(crashes[0],
            std::string("error: scheduler bad_plan: plan failed: scheduler process died "
                        "during plan: killed by signal 11 (Segmentation fault)") +
                kFallback);
  EXPECT_EQ(log.lines("restarting")[0],
            "warning: scheduler bad_plan: restarting its process (restart 1 of at most 100)");
}

// A child that crashes on every call is restarted twice, then the host plans alone.
TEST(ProcessScheduler, RestartsAreBoundedAndThenTheHostPlansAlone) {
  auto s =
      sy::make_process_scheduler(kBadPlan, {{"fault", "crash"}, {"from_call", "1"}}, options(2));
  const double failures0 = counter("scheduler_process_failures");
  const double restarts0 = counter("scheduler_process_restarts");
  sy::test::LogCapture log;
  const auto got = run(*s);
  EXPECT_EQ(got.tokens, reference().tokens);
  EXPECT_TRUE(got.all_finished_by_length);
  EXPECT_EQ(counter("scheduler_process_failures") - failures0, 3);  // the first child + 2
  EXPECT_EQ(counter("scheduler_process_restarts") - restarts0, 2);
  EXPECT_EQ(got.invalid_plans, got.steps);  // no step was planned by the plugin
  const auto down = log.lines("is down");
  ASSERT_EQ(down.size(), got.steps - 3);
  EXPECT_EQ(down[0], std::string("error: scheduler bad_plan: plan failed: scheduler process is "
                                 "down: it failed 3 times and may be restarted at most 2") +
                         kFallback);
}

TEST(ProcessScheduler, HangingPluginTimesOutAndIsKilled) {
  auto s = sy::make_process_scheduler(kBadPlan, {{"fault", "hang"}, {"from_call", "2"}},
                                      options(1, 300));
  const double failures0 = counter("scheduler_process_failures");
  sy::test::LogCapture log;
  const auto got = run(*s);
  EXPECT_EQ(got.tokens, reference().tokens);
  EXPECT_EQ(counter("scheduler_process_failures") - failures0, 2);  // each child hangs once
  const auto timeouts = log.lines("did not answer");
  ASSERT_EQ(timeouts.size(), 2u);
  EXPECT_EQ(timeouts[0],
            std::string("error: scheduler bad_plan: plan failed: scheduler process did "
                        "not answer plan within 300 ms; killed it") +
                kFallback);
}

// Bad plans from a child meet the same validator, and its counters reach the host's.
TEST(ProcessScheduler, InvalidPlansFromTheChildAreCaughtLikeInProcess) {
  auto s = sy::make_process_scheduler(
      kBadPlan, {{"fault", "unknown_id"}, {"from_call", "1"}, {"every", "3"}}, options());
  const double faults0 = counter("bad_plan_faults");
  sy::test::LogCapture log;
  const auto got = run(*s);
  EXPECT_EQ(got.tokens, reference().tokens);
  EXPECT_GE(got.invalid_plans, 2u);
  EXPECT_EQ(double(got.invalid_plans), counter("bad_plan_faults") - faults0);
  EXPECT_EQ(
      log.lines("fallback plan")[0],
      std::string("error: scheduler bad_plan: entry 2: unknown request id 999999") + kFallback);
}

// The view's cost model stays in the host; the child's calls to it are answered over the pipe.
TEST(ProcessScheduler, CostModelCallsReachTheHost) {
  auto s = sy::make_process_scheduler(kBadPlan, {{"probe_cost", "1"}}, options());
  sy_sched_view v{};
  v.struct_size = sizeof v;
  v.request_size = sizeof(sy_sched_request);
  v.kv_block_size = 16;
  v.max_batch_tokens = 64;
  v.max_seqs = 4;
  v.estimate_step_ns = [](void* ctx, const sy_step_shape* sh) -> int64_t {
    return *static_cast<int64_t*>(ctx) + sh->n_prefill_tokens * 1000 + sh->n_decode_seqs * 10 +
           int64_t(sh->kv_ctx_tokens);
  };
  int64_t base = 5'000'000;
  v.cost_ctx = &base;
  sy_sched_entry e[2];
  uint64_t pre[2];
  sy_sched_plan p{};
  p.struct_size = sizeof p;
  p.entries = e;
  p.entries_capacity = 2;
  p.preempt = pre;
  p.preempt_capacity = 2;
  const double cost0 = counter("bad_plan_cost_ns");
  ASSERT_NO_THROW(s->plan(v, p));
  EXPECT_EQ(p.n_entries, 0u);
  EXPECT_EQ(counter("bad_plan_cost_ns") - cost0, 5'000'000 + 7000 + 30 + 100);
}

TEST(ProcessSchedulerConfig, IsolationIsAHostKeyNotAPluginParameter) {
  const std::string base = "[model]\npath = \"m.gguf\"\n[backend]\nplugin = \"cpu_ref\"\n";
  const sy::Config c = sy::parse_config(
      base + "[scheduler]\nplugin = \"fixed_window\"\nisolation = \"process\"\nmax_batch = 2\n",
      "t.toml");
  EXPECT_EQ(c.scheduler.isolation, sy::Isolation::process);
  EXPECT_EQ(c.scheduler.params, (sy::Params{{"max_batch", "2"}}));
  EXPECT_EQ(sy::parse_config(base + "[scheduler]\nplugin = \"fixed_window\"\n", "t.toml")
                .scheduler.isolation,
            sy::Isolation::in_process);
  // The backend has no such key: there it stays a plugin parameter.
  const sy::Config b = sy::parse_config(
      "[model]\npath = \"m.gguf\"\n[backend]\nplugin = \"cpu_ref\"\nisolation = \"process\"\n"
      "[scheduler]\nplugin = \"fixed_window\"\n",
      "t.toml");
  EXPECT_EQ(b.backend.params, (sy::Params{{"isolation", "process"}}));
  try {
    sy::parse_config(base + "[scheduler]\nplugin = \"fixed_window\"\nisolation = \"sandbox\"\n",
                     "t.toml");
    FAIL() << "accepted isolation = \"sandbox\"";
  } catch (const sy::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.toml:7:13: scheduler.isolation: must be one of \"in_process\", \"process\", got "
              "'sandbox'");
  }
}

// The wire carries the view as its own bytes: every member but the host's pointers arrives as
// sent, whatever the struct holds (a member appended later included), so nothing can be left
// out the way state_slots_total / state_slots_free once were.
TEST(PlanWire, EveryViewMemberButTheHostPointersArrives) {
  sy_sched_view v;
  auto* bytes = reinterpret_cast<unsigned char*>(&v);
  for (size_t i = 0; i < sizeof v; ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 1);
  sy_sched_request reqs[3]{};
  for (int i = 0; i < 3; ++i) reqs[i].id = 100 + i;
  v.struct_size = sizeof v;
  v.request_size = sizeof(sy_sched_request);
  v.waiting = reqs;
  v.n_waiting = 2;
  v.running = reqs + 2;
  v.n_running = 1;
  sy_sched_plan caps{};
  caps.entries_capacity = 4;
  caps.preempt_capacity = 2;
  sy::wire::Writer w;
  sy::wire::put_view(w, v, caps);
  sy::wire::Reader r(w.data());
  const sy::wire::ViewCopy c = sy::wire::get_view(r);
  EXPECT_TRUE(r.done());
  const auto* got = reinterpret_cast<const unsigned char*>(&c.view);
  const size_t pointers[] = {offsetof(sy_sched_view, waiting), offsetof(sy_sched_view, running),
                             offsetof(sy_sched_view, estimate_step_ns),
                             offsetof(sy_sched_view, cost_ctx), offsetof(sy_sched_view, host_ctx)};
  auto in_pointer = [&](size_t i) {
    for (size_t p : pointers)
      if (i >= p && i < p + sizeof(void*)) return true;
    return false;
  };
  for (size_t i = sizeof(uint32_t); i < sizeof v; ++i) {
    if (in_pointer(i)) continue;
    ASSERT_EQ(got[i], bytes[i]) << "byte " << i << " of sy_sched_view";
  }
  EXPECT_EQ(c.view.state_slots_total, v.state_slots_total);
  EXPECT_EQ(c.view.state_slots_free, v.state_slots_free);
  EXPECT_EQ(c.view.state_slots_cached, v.state_slots_cached);
  EXPECT_EQ(c.view.host_ctx, nullptr) << "a host address means nothing in the child";
  EXPECT_EQ(c.view.cost_ctx, nullptr);
  EXPECT_TRUE(c.has_cost_model);  // the pattern left estimate_step_ns non-null
  ASSERT_EQ(c.view.n_waiting, 2u);
  EXPECT_EQ(SY_SCHED_REQUEST_AT(&c.view, c.view.waiting, 1)->id, 101u);
  EXPECT_EQ(SY_SCHED_REQUEST_AT(&c.view, c.view.running, 0)->id, 102u);
  EXPECT_EQ(c.entries_capacity, 4u);
  EXPECT_EQ(c.preempt_capacity, 2u);

  const sy_step_shape shape{sizeof(sy_step_shape), 17, 5, 0, 12345};
  sy::wire::Writer ws;
  sy::wire::put_shape(ws, shape);
  sy::wire::Reader rs(ws.data());
  const sy_step_shape back = sy::wire::get_shape(rs);
  EXPECT_EQ(back.n_prefill_tokens, 17u);
  EXPECT_EQ(back.n_decode_seqs, 5u);
  EXPECT_EQ(back.kv_ctx_tokens, 12345u);
}
