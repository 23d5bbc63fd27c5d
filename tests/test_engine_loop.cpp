// The one engine loop (engine/engine_loop.h) and the batch-aware cost model
// (engine/cost_model.h).
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "engine/cost_model.h"
#include "engine/engine_loop.h"
#include "host/host_api.h"
#include "engine_run.h"
#include "tiny_model.h"

using sy::engine::CostModel;
using sy::engine::EngineLoop;

namespace {

sy_step_shape shape(uint32_t prefill, uint32_t decode, uint64_t ctx) {
  return sy_step_shape{sizeof(sy_step_shape), prefill, decode, 0, ctx};
}

// A memory-bound backend: 1 ms per step, 8 ms streaming the weights, 0.5 ms per token of
// compute (so up to 16 tokens ride on the weight stream), 100 ns per cached token read.
double truth_ns(uint32_t tokens, uint64_t ctx) {
  return 1e6 + std::max(8e6, 0.5e6 * tokens) + 100.0 * double(ctx);
}

// The CPU backend's kernel switch: a GEMV of up to 4 rows, then a GEMM that costs twice as much
// at 5 rows and grows with them; the context read apart from the step size.
double switch_ns(uint32_t tokens, uint64_t ctx) {
  return (tokens <= 4 ? 10e6 : 20e6 + 0.25e6 * tokens) + 50.0 * double(ctx);
}

}  // namespace

TEST(CostModel, LearnsThatABatchOfDecodesCostsAboutWhatOneDoes) {
  // A prior far from the truth (compute-bound from the first token).
  CostModel m({0, 1e5, 2e6, 0});
  const uint32_t decodes[] = {1, 2, 4, 8, 12, 16, 24, 32};
  for (int round = 0; round < 20; ++round) {
    for (uint32_t d : decodes) m.observe(shape(0, d, 200 * d), int64_t(truth_ns(d, 200 * d)));
    for (uint32_t p : {64u, 128u, 256u}) m.observe(shape(p, 0, p), int64_t(truth_ns(p, p)));
  }
  const double one = double(m.estimate(shape(0, 1, 200)));
  const double eight = double(m.estimate(shape(0, 8, 1600)));
  EXPECT_NEAR(one, truth_ns(1, 200), 0.05 * truth_ns(1, 200));
  EXPECT_NEAR(eight, truth_ns(8, 1600), 0.05 * truth_ns(8, 1600));
  EXPECT_LT(eight, 0.2 * 8 * one) << "a batch of 8 decodes must cost far less than 8 singles";
  EXPECT_NEAR(double(m.estimate(shape(256, 0, 256))), truth_ns(256, 256), 0.05 * truth_ns(256, 256));
  // Sizes between and beyond the observed ones follow the curve (a straight continuation).
  EXPECT_NEAR(double(m.estimate(shape(0, 20, 4000))), truth_ns(20, 4000),
              0.05 * truth_ns(20, 4000));
  EXPECT_NEAR(double(m.estimate(shape(512, 0, 512))), truth_ns(512, 512), 0.1 * truth_ns(512, 512));
}

TEST(CostModel, FollowsAKernelSwitchInTheStepSize) {
  CostModel m({2e5, 8e6, 5e5, 10});
  for (int round = 0; round < 12; ++round)
    for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 6u, 8u, 12u, 16u, 32u, 64u, 200u}) {
      const uint64_t ctx = 1000 * (uint64_t(round % 4) + 1) * n;  // apart from n
      m.observe(shape(0, n, ctx), int64_t(switch_ns(n, ctx)));
    }
  for (uint32_t n : {1u, 4u, 5u, 8u, 16u, 64u, 200u})
    for (uint64_t ctx : {uint64_t(0), uint64_t(3000) * n}) {
      const double t = switch_ns(n, ctx);
      EXPECT_NEAR(double(m.estimate(shape(0, n, ctx))), t, 0.05 * t) << n << " tokens, " << ctx;
    }
}

TEST(CostModel, ALargerStepNeverCostsLess) {
  CostModel m({2e5, 8e6, 5e5, 10});
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(0.7, 1.3);
  for (int i = 0; i < 600; ++i) {
    const uint32_t n = 1 + rng() % 300;
    m.observe(shape(n, 0, n), int64_t(switch_ns(n, n) * noise(rng)));
  }
  int64_t last = 0;
  for (uint32_t n = 0; n <= 20000; n += (n < 600 ? 1 : 97)) {
    const int64_t t = m.estimate(shape(n, 0, 0));
    EXPECT_GE(t, last) << n << " tokens";
    last = t;
  }
}

TEST(CostModel, KeepsItsPriorUntilItObservesSteps) {
  CostModel m({2e5, 8e6, 5e5, 10});
  EXPECT_EQ(m.observations(), 0u);
  EXPECT_EQ(m.estimate(shape(0, 1, 0)), int64_t(2e5 + 8e6));
  EXPECT_EQ(m.estimate(shape(100, 0, 0)), int64_t(2e5 + 5e7));
}

TEST(EngineLoop, IdleSleepIsTheWaitWindowClamped) {
  sy::engine::StepStats st;
  st.wait_ns = 0;
  EXPECT_EQ(EngineLoop::idle_sleep_ns(st), EngineLoop::kMinIdleSleepNs);
  st.wait_ns = 3'000'000;
  EXPECT_EQ(EngineLoop::idle_sleep_ns(st), 3'000'000);
  st.wait_ns = INT64_MAX;
  EXPECT_EQ(EngineLoop::idle_sleep_ns(st), EngineLoop::kMaxIdleSleepNs);
}

// A source that submits its prompts on the first intake and records how the loop waits.
class Recorder : public sy::engine::WorkSource {
 public:
  explicit Recorder(std::vector<std::vector<int32_t>> p) : prompts_(std::move(p)) {}
  void intake(sy::engine::Engine& e) override {
    for (auto& p : prompts_) {
      sy::engine::RequestSpec s;
      s.prompt = p;
      s.max_new_tokens = 4;
      s.stop_at_eos = false;
      ids.push_back(e.submit(s));
    }
    prompts_.clear();
  }
  bool keep_going(const sy::engine::Engine& e) override { return !e.idle(); }
  void wait(const sy::engine::Engine&, int64_t until) override {
    waits.push_back(until - sy::now_ns());
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<int64_t>(0, waits.back())));
  }
  void after_step(sy::engine::Engine&, const sy::engine::StepStats& st, int64_t, int64_t) override {
    ++steps;
    ran += st.n_seqs > 0;
  }
  std::vector<uint64_t> ids;
  std::vector<int64_t> waits;
  int steps = 0, ran = 0;

 private:
  std::vector<std::vector<int32_t>> prompts_;
};

TEST(EngineLoop, SleepsThroughTheSchedulersWindowAndRunsEverythingToTheEnd) {
  sy::test::TinyModel m(sy::test::host().load(SY_PLUGIN_BACKEND, "cpu_ref"));
  // The original scheduler holds a batch for 30 ms waiting for 4 requests; two come.
  sy::Scheduler s(sy::test::host().load(SY_PLUGIN_SCHEDULER, "fixed_window"),
                  {{"max_batch", "4"}, {"wait_window_ms", "30"}});
  sy::engine::Engine e(*m.model, *m.cache, s, {});
  Recorder src(sy::test::tiny_prompts(2));
  const int64_t t0 = sy::now_ns();
  EngineLoop::run(e, src);
  EXPECT_GE(sy::now_ns() - t0, 25'000'000) << "the window was not waited out";
  ASSERT_FALSE(src.waits.empty());
  for (int64_t w : src.waits) {
    EXPECT_LE(w, EngineLoop::kMaxIdleSleepNs);
    EXPECT_GT(w, 0);
  }
  EXPECT_EQ(src.ran, src.steps - int(src.waits.size()));  // every step that ran nothing waited
  for (uint64_t id : src.ids) EXPECT_EQ(e.request(id).output.size(), 4u);
}
