// Overlapped stepping (plan and prepare step N+1 while step N computes on a worker) changes when
// the host works, never what a request gets: token-for-token equality with the synchronous
// engine under both schedulers, with end-of-sequence stops that void planned entries,
// cancellations while a step computes, plans deferred by preemption, and recurrent-state slots.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "engine_workload.h"
#include "host/host_api.h"

namespace {

namespace fs = std::filesystem;
using Tokens = std::vector<std::vector<int32_t>>;

double counter(const std::string& name) {
  const auto c = sy::host_counters();
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

sy::test::EngineRun make_run(const std::string& scheduler, bool overlap) {
  sy::test::EngineRun run;
  run.scheduler = scheduler;
  if (scheduler == "fixed_window") run.params = {{"max_batch", "4"}, {"wait_window_ms", "0"}};
  run.limits.overlap = overlap;
  run.limits.max_batch_tokens = 48;  // chunks the 70+ token prompts
  run.max_new = 16;
  return run;
}

// Each output cut after its first token of the `eos` set, as a stopping engine must return it;
// cuts[i] counts the outputs eos[i] cut.
Tokens cut_at(const Tokens& full, const std::vector<int32_t>& eos, std::vector<int>* cuts) {
  Tokens out = full;
  cuts->assign(eos.size(), 0);
  for (auto& o : out) {
    auto it = std::find_first_of(o.begin(), o.end(), eos.begin(), eos.end());
    if (it != o.end() && it + 1 != o.end()) {
      ++(*cuts)[std::find(eos.begin(), eos.end(), *it) - eos.begin()];
      o.erase(it + 1, o.end());
    }
  }
  return out;
}

class OverlapEquivalence : public testing::TestWithParam<std::string> {};

TEST_P(OverlapEquivalence, SameTokensAsTheSynchronousEngine) {
  auto sync = make_run(GetParam(), false);
  const Tokens want = sync.run(sy::test::chunked_prefix_workload());
  const double hidden0 = counter("overlap_hidden_host_ns");
  auto over = make_run(GetParam(), true);
  EXPECT_EQ(over.run(sy::test::chunked_prefix_workload()), want);
  EXPECT_GT(counter("overlap_hidden_host_ns"), hidden0) << "no step was planned during a forward";
}

TEST_P(OverlapEquivalence, EndOfSequenceStopsDropThePlannedDecode) {
  auto full = make_run(GetParam(), false);
  const Tokens free_running = full.run(sy::test::chunked_prefix_workload());
  // Tokens requests 0 and 1 produce early, as an end-of-generation set (eos, eot, eom): every
  // request stops at its first token of the set, and each of the two stops some request.
  const std::vector<int32_t> eos = {free_running[0][3], free_running[1][2]};
  std::vector<int> cuts;
  const Tokens want = cut_at(free_running, eos, &cuts);
  ASSERT_GT(cuts[0], 0);
  ASSERT_GT(cuts[1], 0);
  const double dropped0 = counter("overlap_dropped_entries");
  for (bool overlap : {false, true}) {
    auto run = make_run(GetParam(), overlap);
    run.limits.eos = eos;
    run.stop_at_eos = true;
    EXPECT_EQ(run.run(sy::test::chunked_prefix_workload()), want) << (overlap ? "overlap" : "sync");
  }
  EXPECT_GT(counter("overlap_dropped_entries"), dropped0) << "no planned decode was voided";
}

TEST_P(OverlapEquivalence, CancellingWhileAStepComputesFreesEverything) {
  auto sync = make_run(GetParam(), false);
  const Tokens want = sync.run(sy::test::chunked_prefix_workload());
  auto run = make_run(GetParam(), true);
  // Each of these is cancelled as soon as it has two tokens and its next step is computing.
  std::set<size_t> pending = {1, 4, 8};
  run.after_step = [&](sy::engine::Engine& e, const std::vector<uint64_t>& ids, int) {
    for (auto it = pending.begin(); it != pending.end();) {
      const auto& r = e.request(ids[*it]);
      if (r.output.size() >= 2 && r.inflight_tokens > 0) {
        EXPECT_TRUE(e.cancel(ids[*it]));
        EXPECT_EQ(r.finish, sy::engine::FinishReason::aborted);
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  };
  const Tokens got =
      run.run(sy::test::chunked_prefix_workload());  // the run checks no KV block leaked
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(pending.empty()) << "every chosen request should be cancelled mid-flight";
  for (size_t i = 0; i < got.size(); ++i) {
    if (i == 1 || i == 4 || i == 8) {
      ASSERT_LE(got[i].size(), want[i].size());
      EXPECT_TRUE(std::equal(got[i].begin(), got[i].end(), want[i].begin())) << "request " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << "request " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, OverlapEquivalence,
                         testing::Values("fixed_window", "dynamic"));

TEST(Overlap, PreemptingPlansWaitForTheComputingStep) {
  auto sync = make_run("fixed_window", false);
  const Tokens want = sync.run(sy::test::chunked_prefix_workload());
  auto run = make_run("dynamic", true);
  run.params = sy::test::dynamic_timing_free();
  run.limits.prefix_caching = true;
  run.kv_blocks = 16;  // ~10 x 100 tokens in 256 slots: the dynamic scheduler must preempt
  const double deferred0 = counter("overlap_deferred_plans");
  EXPECT_EQ(run.run(sy::test::chunked_prefix_workload()), want);
  EXPECT_GT(run.preemptions, 0u);
  EXPECT_GT(counter("overlap_deferred_plans"), deferred0);
  EXPECT_GT(run.prefix_hit_tokens, 0u);
}

TEST(Overlap, RecurrentStateSlotsOfFinishingRequestsAreNotReusedEarly) {
  const fs::path p =
      fs::path(testing::TempDir()) / ("sy-overlap-hybrid-" + std::to_string(::getpid()) + ".gguf");
  sy::model::write_random_model(sy::model::preset_shape("hybrid-tiny"), "f32", 5, p);
  Tokens want;
  for (bool overlap : {false, true}) {
    auto run = make_run("dynamic", overlap);
    run.model = p;
    run.limits.max_seqs = 3;  // admissions wait for slots that finishing requests hold
    run.max_new = 7;
    const Tokens got = run.run(sy::test::chunked_prefix_workload());
    if (!overlap)
      want = got;
    else
      EXPECT_EQ(got, want);
  }
  fs::remove(p);
}

TEST(Overlap, AStepIsInFlightWhenStepReturns) {
  sy::test::Loaded m(sy::test::model_file("f32"), "cpu_ref");
  sy::Scheduler s(sy::test::host().load(SY_PLUGIN_SCHEDULER, "fixed_window"),
                  sy::Params{{"wait_window_ms", "0"}});
  sy::engine::EngineLimits lim;
  lim.overlap = true;
  sy::engine::Engine e(*m.model, *m.cache, s, lim);
  sy::engine::RequestSpec spec;
  spec.prompt = sy::test::sample_tokens(8, 259, 1);
  spec.max_new_tokens = 4;
  spec.stop_at_eos = false;
  const uint64_t id = e.submit(spec);
  // Step 1 prefills and samples token 1; its decode was planned and launched before it returned.
  EXPECT_EQ(e.step().n_tokens, 8u);
  EXPECT_EQ(e.request(id).output.size(), 1u);
  EXPECT_EQ(e.request(id).inflight_tokens, 1u);
  EXPECT_EQ(e.request(id).num_computed, 8u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e.step().n_decode, 1u);
  EXPECT_TRUE(e.idle());
  EXPECT_EQ(e.request(id).output.size(), 4u);
  EXPECT_EQ(e.request(id).inflight_tokens, 0u);
}

// Delegates to a real model and fails its n-th forward pass, before touching the cache.
class FailingModel : public sy::model::Model {
 public:
  FailingModel(sy::model::Model& inner, int fail_at) : inner_(inner), fail_at_(fail_at) {}
  const sy::model::ModelInfo& info() const override { return inner_.info(); }
  std::vector<float> forward(const std::vector<sy::model::SeqInput>& seqs,
                             sy::model::KvCache& cache, bool all_logits) override {
    if (++calls_ == fail_at_) throw std::runtime_error("injected forward failure");
    return inner_.forward(seqs, cache, all_logits);
  }

 private:
  sy::model::Model& inner_;
  int fail_at_, calls_ = 0;
};

TEST(Overlap, AFailedForwardPassThrowsFromStepAndCountsNothing) {
  auto sync = make_run("fixed_window", false);
  const Tokens want = sync.run(sy::test::chunked_prefix_workload());
  sy::test::Loaded m(sy::test::model_file("f32"), "cpu_ref");
  FailingModel failing(*m.model, 5);
  sy::Scheduler s(sy::test::host().load(SY_PLUGIN_SCHEDULER, "fixed_window"),
                  sy::Params{{"max_batch", "4"}, {"wait_window_ms", "0"}});
  sy::engine::EngineLimits lim;
  lim.overlap = true;
  lim.max_batch_tokens = 48;
  sy::engine::Engine e(failing, *m.cache, s, lim);
  std::vector<uint64_t> ids;
  for (const auto& p : sy::test::chunked_prefix_workload()) {
    sy::engine::RequestSpec spec;
    spec.prompt = p;
    spec.max_new_tokens = 16;
    spec.stop_at_eos = false;
    ids.push_back(e.submit(spec));
  }
  int failures = 0;
  for (int steps = 0; !e.idle() && steps < 20000; ++steps) {
    try {
      e.step();
    } catch (const std::runtime_error& ex) {
      EXPECT_STREQ(ex.what(), "injected forward failure");
      ++failures;
      // The failed pass left no progress in flight; stepping on recomputes it.
      for (uint64_t id : ids) EXPECT_EQ(e.request(id).inflight_tokens, 0u);
    }
  }
  EXPECT_EQ(failures, 1);
  Tokens got;
  for (uint64_t id : ids) got.push_back(e.request(id).output);
  EXPECT_EQ(got, want);
  EXPECT_EQ(m.cache->pool().free_count(), m.cache->pool().total());
}

}  // namespace
