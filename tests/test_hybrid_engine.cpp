// The engine end to end on hybrid models: greedy tokens do not depend on batching or on the
// backend, follow the naive reference's argmax, survive preemption and recompute (the state is
// reset, not reused), and the scheduler view reports the recurrent-state budget.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "engine/engine.h"
#include "gguf/gguf.h"
#include "host/host_api.h"
#include "host/plugin_host.h"
#include "host/process_scheduler.h"
#include "host/scheduler.h"
#include "modelgen/generator.h"
#include "naive_hybrid.h"

namespace fs = std::filesystem;

namespace {

sy::PluginHost& host() {
  static sy::PluginHost h({SWITCHYARD_PLUGIN_DIR, SWITCHYARD_TEST_PLUGIN_DIR});
  return h;
}

const fs::path& model_file(const std::string& preset) {
  static std::map<std::string, fs::path> files;
  if (auto it = files.find(preset); it != files.end()) return it->second;
  const fs::path dir = testing::TempDir();
  const fs::path p = dir / ("sy-hybrid-engine-" + preset + ".gguf");
  const fs::path tmp =
      dir / ("sy-hybrid-engine-" + preset + "-" + std::to_string(::getpid()) + ".gguf");
  sy::model::write_random_model(sy::model::preset_shape(preset), "f32", 3, tmp);
  fs::rename(tmp, p);
  return files[preset] = p;
}

std::vector<std::vector<int32_t>> prompts(int n) {
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> p(5 + 7 * i);
    for (size_t j = 0; j < p.size(); ++j) p[j] = int32_t((j * 31 + i * 17 + 3) % 250) + 3;
    out.push_back(p);
  }
  return out;
}

struct Run {
  std::vector<std::vector<int32_t>> tokens;
  uint32_t preemptions = 0;
  uint64_t invalid_plans = 0;
  std::map<uint32_t, uint64_t> peak_by_path;  // requests alternate between paths 0 and 1
  uint64_t max_state_in_use = 0, state_per_seq = 0, bytes_per_block = 0;
  std::map<std::string, double> counters;  // the engine's own
};

// How the scheduler runs and what the engine caches.
struct Mode {
  bool isolated = false;  // [scheduler] isolation = "process"
  bool prefix_caching = false;
};

std::unique_ptr<sy::Scheduler> make_scheduler(const std::string& name, const sy::Params& params,
                                              bool isolated) {
  if (!isolated)
    return std::make_unique<sy::Scheduler>(host().load(SY_PLUGIN_SCHEDULER, name), params);
  sy::ProcessOptions o;
  o.runner = SWITCHYARD_RUNNER;
  return sy::make_process_scheduler(host().locate(SY_PLUGIN_SCHEDULER, name), params, o);
}

Run run(const std::string& preset, const std::string& backend, const std::string& scheduler,
        const sy::Params& sched_params, uint32_t blocks, uint32_t max_new, int n_prompts = 6,
        Mode mode = {}) {
  auto file = sy::gguf::File::open(model_file(preset));
  sy::Backend be(host().load(SY_PLUGIN_BACKEND, backend), {});
  auto model = sy::model::load_model(*file, be);
  sy::model::KvCache cache(be, model->info().n_attn_layers, model->info().kv_row_width, 16, blocks);
  const auto s = make_scheduler(scheduler, sched_params, mode.isolated);
  sy::engine::EngineLimits lim;
  lim.max_batch_tokens = 64;
  lim.max_seqs = 4;
  lim.prefix_caching = mode.prefix_caching;
  sy::engine::Engine e(*model, cache, *s, lim);
  std::vector<uint64_t> ids;
  for (const auto& p : prompts(n_prompts)) {
    sy::engine::RequestSpec spec;
    spec.prompt = p;
    spec.max_new_tokens = max_new;
    spec.stop_at_eos = false;
    spec.path = ids.size() % 2;
    ids.push_back(e.submit(spec));
  }
  Run r;
  for (int steps = 0; !e.idle() && steps < 20000; ++steps) {
    e.step();
    r.max_state_in_use = std::max(r.max_state_in_use, e.state_bytes_in_use());
  }
  r.peak_by_path = e.peak_memory_by_path();
  r.state_per_seq = model->info().state_bytes_per_seq;
  r.bytes_per_block = cache.bytes_per_block();
  for (auto id : ids) {
    EXPECT_EQ(e.request(id).finish, sy::engine::FinishReason::length);
    r.tokens.push_back(e.request(id).output);
    r.preemptions += e.request(id).num_preemptions;
  }
  r.invalid_plans = e.invalid_plans();
  r.counters = e.counters().snapshot();
  return r;
}

const sy::Params kFixed1 = {{"max_batch", "1"}, {"wait_window_ms", "0"}};
const sy::Params kFixed4 = {{"max_batch", "4"}, {"wait_window_ms", "0"}};

}  // namespace

TEST(HybridEngine, GreedyTokensDoNotDependOnBatchingOrBackend) {
  for (const char* preset : {"hybrid-tiny", "mamba-tiny"}) {
    SCOPED_TRACE(preset);
    const auto one = run(preset, "cpu_ref", "fixed_window", kFixed1, 64, 10);
    const auto four = run(preset, "cpu_ref", "fixed_window", kFixed4, 64, 10);
    const auto onednn = run(preset, "cpu_onednn", "fixed_window", kFixed4, 64, 10);
    EXPECT_EQ(one.tokens, four.tokens);
    EXPECT_EQ(one.tokens, onednn.tokens);
    EXPECT_EQ(four.invalid_plans, 0u);
    for (const auto& t : one.tokens) EXPECT_EQ(t.size(), 10u);
  }
}

TEST(HybridEngine, GreedyTokensFollowTheReferenceArgmax) {
  auto file = sy::gguf::File::open(model_file("hybrid-tiny"));
  sy::test::NaiveHybrid ref(*file);
  const auto got = run("hybrid-tiny", "cpu_ref", "fixed_window", kFixed4, 64, 5, 2);
  const auto ps = prompts(2);
  for (size_t i = 0; i < ps.size(); ++i) {
    std::vector<int> seq(ps[i].begin(), ps[i].end());
    for (int j = 0; j < 5; ++j) {
      const auto last = ref.logits(seq).back();
      const int next = int(std::max_element(last.begin(), last.end()) - last.begin());
      EXPECT_EQ(got.tokens[i][j], next) << "prompt " << i << " token " << j;
      seq.push_back(next);
    }
  }
}

// The dynamic scheduler with too few KV blocks preempts and recomputes; every recompute starts
// at position 0, so the slot's state is zeroed and the tokens equal an unconstrained run.
TEST(HybridEngine, PreemptionAndRecomputeResetTheRecurrentState) {
  const auto free_run = run("hybrid-tiny", "cpu_ref", "fixed_window", kFixed4, 64, 24);
  // No aging: past aging_ms (on a loaded machine) the order turns FCFS and may not preempt.
  const auto tight = run("hybrid-tiny", "cpu_ref", "dynamic", {{"aging_ms", "1e9"}}, 9, 24);
  EXPECT_GT(tight.preemptions, 0u) << "the cache was not tight enough to provoke a preemption";
  EXPECT_EQ(tight.tokens, free_run.tokens);
}

// A state-aware plugin sees the same budget in both isolation modes (the child's view carries
// every member of the struct), and its counters land in the engine that planned.
TEST(HybridEngine, SchedulerViewReportsTheStateSlotBudgetInBothIsolationModes) {
  // A counter never added reads 0 (an isolated plugin's zero deltas are not forwarded).
  auto get = [](const auto& r, const std::string& k) {
    auto it = r.counters.find(k);
    return it == r.counters.end() ? 0.0 : it->second;
  };
  for (bool isolated : {false, true}) {
    SCOPED_TRACE(isolated ? "process" : "in_process");
    const auto r =
        run("hybrid-tiny", "cpu_ref", "state_view_probe", {}, 64, 6, 6, {isolated, false});
    const double steps = get(r, "probe.steps");
    EXPECT_GT(steps, 0);
    EXPECT_EQ(get(r, "probe.slots_total"), 4 * steps);  // max_seqs slots every step
    EXPECT_EQ(get(r, "probe.slot_mismatch"), 0);
    EXPECT_EQ(get(r, "probe.snapshot_slots"), 0);  // no prefix caching: no snapshots
    // With hybrid prefix caching: 4 snapshot slots per running one, never more cached.
    const auto c =
        run("hybrid-tiny", "cpu_ref", "state_view_probe", {}, 64, 6, 6, {isolated, true});
    EXPECT_EQ(get(c, "probe.snapshot_slots"), 16 * get(c, "probe.steps"));
    EXPECT_EQ(get(c, "probe.slot_mismatch"), 0);
    EXPECT_EQ(c.tokens, r.tokens);
    EXPECT_EQ(c.invalid_plans, 0u);
    // A model without recurrent layers has no state budget.
    const auto m = run("moe-tiny", "cpu_ref", "state_view_probe", {}, 64, 3, 2, {isolated, false});
    EXPECT_GT(get(m, "probe.steps"), 0);
    EXPECT_EQ(get(m, "probe.slots_total"), 0);
    EXPECT_EQ(get(m, "probe.slot_mismatch"), 0);
  }
}

// Peak memory per triage path: with one request at a time (max_batch 1) a path's peak is its
// largest request's KV blocks plus one recurrent state.
TEST(HybridEngine, ReportsPeakMemoryPerPathAndStateInUse) {
  const auto r = run("hybrid-tiny", "cpu_ref", "fixed_window", kFixed1, 64, 10);
  ASSERT_EQ(r.peak_by_path.size(), 2u);
  const auto ps = prompts(6);
  for (uint32_t path : {0u, 1u}) {
    const size_t longest = ps[4 + path].size();  // prompts grow: 4 and 5 are each path's longest
    const uint64_t lo = (longest + 15) / 16 * r.bytes_per_block + r.state_per_seq;
    const uint64_t hi = (longest + 10 + 15) / 16 * r.bytes_per_block + r.state_per_seq;
    EXPECT_GE(r.peak_by_path.at(path), lo) << "path " << path;
    EXPECT_LE(r.peak_by_path.at(path), hi) << "path " << path;
  }
  EXPECT_EQ(r.max_state_in_use, r.state_per_seq);  // one request at a time
  const auto four = run("hybrid-tiny", "cpu_ref", "fixed_window", kFixed4, 64, 10);
  EXPECT_EQ(four.max_state_in_use, 4 * four.state_per_seq);
}
