// Plugins compiled against older minors' headers (tests/abi_fixtures/v1.0, v1.1, v1.2) keep loading
// and working under this host, and the host never reads a table past its struct_size.
#include <gtest/gtest.h>

#include "engine_run.h"
#include "host/abi_table.h"
#include "host/backend.h"
#include "host/capabilities.h"
#include "host/plugin_host.h"
#include "host/scheduler.h"
#include "llama_variant.h"
#include "model/model.h"
#include "sched_harness.h"
#include "tiny_model.h"

namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = SWITCHYARD_ABI_FIXTURE_DIR;
sy::PluginHost& host() {
  static sy::PluginHost h({kFixtures, SWITCHYARD_PLUGIN_DIR});
  return h;
}

sy::test::RunResult run_with(const std::string& backend, sy::Scheduler& sched) {
  sy::test::TinyModel m(host().load(SY_PLUGIN_BACKEND, backend));
  return sy::test::run_tiny(m, sched, sy::test::tiny_prompts(), 8);
}

sy::test::RunResult reference_run() {
  sy::Scheduler fw(host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
  return run_with("cpu_ref", fw);
}

}  // namespace

TEST(AbiTable, CoveredTableNullsWhatStructSizeDoesNotCover) {
  auto fn = [](sy_backend_t, const sy_step_shape*, int64_t*) { return SY_OK; };
  sy_backend_iface t{};
  t.estimate_step_ns = fn;
  t.struct_size = SY_BACKEND_IFACE_SIZE_1_0;
  EXPECT_EQ(sy::covered_table<sy_backend_iface>(&t).estimate_step_ns, nullptr);
  t.struct_size = SY_BACKEND_IFACE_SIZE_1_0 + 4;  // half a pointer is no member
  EXPECT_EQ(sy::covered_table<sy_backend_iface>(&t).estimate_step_ns, nullptr);
  t.struct_size = SY_BACKEND_IFACE_SIZE_1_0 + sizeof(void*);
  const sy_backend_iface c = sy::covered_table<sy_backend_iface>(&t);
  EXPECT_EQ(c.estimate_step_ns, t.estimate_step_ns);
  EXPECT_EQ(c.struct_size, SY_BACKEND_IFACE_SIZE_1_0 + sizeof(void*));  // the plugin's, kept
}

TEST(AbiTable, EachMinorNeedsTheMembersItWasReleasedWith) {
  EXPECT_EQ(sy::min_table_size(SY_PLUGIN_BACKEND, 0), SY_BACKEND_IFACE_SIZE_1_0);
  EXPECT_EQ(sy::min_table_size(SY_PLUGIN_BACKEND, 1),
            offsetof(sy_backend_iface, estimate_step_ns) + sizeof(void*));
  EXPECT_EQ(sy::min_table_size(SY_PLUGIN_SCHEDULER, 0), 8 + 4 * sizeof(void*));  // create..plan
  EXPECT_EQ(sy::min_table_size(SY_PLUGIN_ROUTER, 2), 8 + 4 * sizeof(void*));     // create..route
}

TEST(AbiCompat, ShortTableForItsMinorIsRefused) {
  const fs::path p = kFixtures / "switchyard_backend_short_table.so";
  try {
    host().load_file(p);
    FAIL() << "loaded a 1.1 plugin with a 1.0 table";
  } catch (const sy::PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "plugin " + p.string() + ": function table has struct_size " +
                                         std::to_string(SY_BACKEND_IFACE_SIZE_1_0) +
                                         ", ABI 1.1 needs at least " +
                                         std::to_string(SY_BACKEND_IFACE_SIZE_1_0 + sizeof(void*)));
  }
}

TEST(AbiCompat, V1_0SchedulerLoadsAndPlansUnderThisHost) {
  auto p = host().load(SY_PLUGIN_SCHEDULER, "v1_0_fcfs");
  EXPECT_EQ(p->abi_version(), SY_MAKE_VERSION(1, 0));
  EXPECT_EQ(p->name(), "v1_0_fcfs");
  sy::Scheduler s(p, {});
  sy::test::SchedHarness h;
  h.max_batch_tokens = 40;
  h.waiting = {h.req(1, 20, 4, 1), h.req(2, 30, 4, 2)};
  std::string err;
  ASSERT_EQ(h.run(s, &err), SY_OK) << err;
  EXPECT_EQ(h.planned(), (std::vector<std::pair<uint64_t, uint32_t>>{{1, 20}, {2, 20}}));
  h.apply();
  ASSERT_EQ(h.run(s, &err), SY_OK) << err;
  EXPECT_EQ(h.planned(), (std::vector<std::pair<uint64_t, uint32_t>>{{1, 1}, {2, 10}}));
}

TEST(AbiCompat, V1_0SchedulerProducesTheReferenceTokens) {
  sy::Scheduler s(host().load(SY_PLUGIN_SCHEDULER, "v1_0_fcfs"), {});
  const auto got = run_with("cpu_ref", s);
  const auto want = reference_run();
  EXPECT_EQ(got.invalid_plans, 0u);
  EXPECT_TRUE(got.all_finished_by_length);
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_EQ(got.tokens[0].size(), 8u);
}

TEST(AbiCompat, V1_1SchedulerNegotiates1_1AndProducesTheReferenceTokens) {
  auto p = host().load(SY_PLUGIN_SCHEDULER, "v1_1_fixed_window");
  EXPECT_EQ(p->abi_version(), SY_MAKE_VERSION(1, 1));
  EXPECT_GT(SY_ABI_VERSION_MINOR, 1);  // this host is newer than the plugin
  sy::Scheduler s(p, {{"wait_window_ms", "0"}});
  const auto got = run_with("cpu_ref", s);
  EXPECT_EQ(got.invalid_plans, 0u);
  EXPECT_TRUE(got.all_finished_by_length);
  EXPECT_EQ(got.tokens, reference_run().tokens);
}

// Host counters belong to one engine instance (ABI 1.3): two engines in one process, each with
// its own instance of the probe scheduler, count only their own plans. The current probe adds
// through counter_add_to(view->host_ctx); the one built against the frozen 1.2 headers knows
// only counter_add, which the host attributes to the engine whose plan() is running.
void expect_counters_per_engine(const std::shared_ptr<sy::Plugin>& probe) {
  const double total0 = sy::host_counters()["probe.steps"];
  sy::Scheduler a(probe, {}), b(probe, {});
  sy::test::TinyModel ma(host().load(SY_PLUGIN_BACKEND, "cpu_ref"));
  sy::test::TinyModel mb(host().load(SY_PLUGIN_BACKEND, "cpu_ref"));
  const auto ra = sy::test::run_tiny(ma, a, sy::test::tiny_prompts(2), 3);
  const auto rb = sy::test::run_tiny(mb, b, sy::test::tiny_prompts(4), 9);
  ASSERT_NE(ra.steps, rb.steps);
  EXPECT_EQ(ra.counters.at("probe.steps"), double(ra.steps));  // one plan per step
  EXPECT_EQ(rb.counters.at("probe.steps"), double(rb.steps));
  EXPECT_EQ(sy::host_counters()["probe.steps"] - total0, double(ra.steps + rb.steps))
      << "the process-wide total still sums every engine";
  EXPECT_EQ(ra.invalid_plans + rb.invalid_plans, 0u);
  EXPECT_TRUE(ra.all_finished_by_length && rb.all_finished_by_length);
}

TEST(AbiCompat, CountersBelongToTheEngineThatPlanned) {
  auto probe = host().load_file(fs::path(SWITCHYARD_TEST_PLUGIN_DIR) /
                                "switchyard_scheduler_state_view_probe.so");
  EXPECT_EQ(probe->abi_version(), SY_ABI_VERSION);
  expect_counters_per_engine(probe);
}

TEST(AbiCompat, V1_2SchedulerLoadsPlansAndItsCountersStillLandInItsEngine) {
  auto probe = host().load(SY_PLUGIN_SCHEDULER, "v1_2_state_view_probe");
  EXPECT_EQ(probe->abi_version(), SY_MAKE_VERSION(1, 2));
  EXPECT_EQ(probe->name(), "state_view_probe");
  expect_counters_per_engine(probe);
  sy::Scheduler s(probe, {});
  EXPECT_EQ(run_with("cpu_ref", s).tokens, reference_run().tokens);
}

TEST(AbiCompat, V1_0BackendTableIsReadOnlyAsFarAsItsStructSize) {
  auto p = host().load(SY_PLUGIN_BACKEND, "v1_0_backend");
  EXPECT_EQ(p->abi_version(), SY_MAKE_VERSION(1, 0));
  sy::Backend b(p, {});
  EXPECT_EQ(b.api().struct_size, SY_BACKEND_IFACE_SIZE_1_0);
  EXPECT_TRUE(b.missing_ops().empty());
  // The fixture keeps a non-NULL pointer right after its table: every later member, whatever
  // this host's minor appended, must read as NULL.
  const auto* bytes = reinterpret_cast<const unsigned char*>(&b.api());
  for (size_t i = SY_BACKEND_IFACE_SIZE_1_0; i < sizeof(sy_backend_iface); ++i)
    ASSERT_EQ(bytes[i], 0) << "byte " << i << " of the host's copy of a 1.0 table";
  EXPECT_EQ(b.api().estimate_step_ns, nullptr);
}

TEST(AbiCompat, V1_0BackendAndSchedulerRunTheModelLikeTheCurrentOnes) {
  const auto want = reference_run();
  sy::Scheduler fw(host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
  EXPECT_EQ(run_with("v1_0_backend", fw).tokens, want.tokens);
  sy::Scheduler old(host().load(SY_PLUGIN_SCHEDULER, "v1_0_fcfs"), {});
  const auto all_old = run_with("v1_0_backend", old);
  EXPECT_EQ(all_old.tokens, want.tokens);
  EXPECT_EQ(all_old.invalid_plans, 0u);
}

// A file with biases, `.scale` tensors and RoPE frequency factors needs the 1.3 model ops; a 1.0
// backend has no such slots and is refused naming them (a plain file runs on it, above).
TEST(AbiCompat, V1_0BackendIsRefusedForAFileThatNeedsThe1_3Ops) {
  sy::test::LlamaVariant v;
  v.biases = v.scales = v.rope_freqs = true;
  const fs::path p = fs::path(testing::TempDir()) / "sy-abi-1_3-ops.gguf";
  sy::test::write_llama_variant(v, 5, p);
  auto f = sy::gguf::File::open(p);
  sy::Backend b(host().load(SY_PLUGIN_BACKEND, "v1_0_backend"), {});
  try {
    sy::model::load_model(*f, b);
    FAIL() << "loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "backend v1_0_backend lacks ops the llama model needs: rope_ext, bias_scale");
  }
  sy::Backend current(host().load(SY_PLUGIN_BACKEND, "cpu_ref"), {});
  EXPECT_NO_THROW(sy::model::load_model(*f, current));
}

// Backends built against the frozen 1.3 and 1.4 headers: their tables are read as far as
// their struct_size, they run the models that need nothing newer like the current cpu_ref, and
// a 2026 family that needs the 1.5 ops (or the 1.5 members of older ops) is refused naming them.
class AbiMinorBackend : public testing::TestWithParam<int> {};

TEST_P(AbiMinorBackend, TableIsReadOnlyAsFarAsItsStructSize) {
  const int minor = GetParam();
  auto p = host().load(SY_PLUGIN_BACKEND, "v1_" + std::to_string(minor) + "_backend");
  EXPECT_EQ(p->abi_version(), SY_MAKE_VERSION(1, minor));
  sy::Backend b(p, {});
  const size_t size =
      minor == 3 ? offsetof(sy_backend_iface, weight_pack) : offsetof(sy_backend_iface, ssm_scan2);
  EXPECT_EQ(b.api().struct_size, size);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&b.api());
  for (size_t i = size; i < sizeof(sy_backend_iface); ++i)
    ASSERT_EQ(bytes[i], 0) << "byte " << i << " of the host's copy of a 1." << minor << " table";
  EXPECT_EQ(b.api().gated_delta_net, nullptr);
}

TEST_P(AbiMinorBackend, RunsTheModelLikeTheCurrentCpuRef) {
  sy::Scheduler fw(host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
  EXPECT_EQ(run_with("v1_" + std::to_string(GetParam()) + "_backend", fw).tokens,
            reference_run().tokens);
}

TEST_P(AbiMinorBackend, IsRefusedForTheFamiliesThatNeedThe1_5Ops) {
  const std::string name = "v1_" + std::to_string(GetParam()) + "_backend";
  auto refusal = [&](const std::string& preset) {
    auto f = sy::gguf::File::open(sy::test::preset_model_file(preset));
    sy::Backend b(host().load(SY_PLUGIN_BACKEND, name), {});
    try {
      sy::model::load_model(*f, b);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  EXPECT_EQ(refusal("qwen35moe-tiny"), "backend " + name +
                                           " lacks ops the qwen35moe model needs: "
                                           "gated_delta_net, mul, unary");
  EXPECT_EQ(refusal("mamba2-tiny"),
            "backend " + name + " lacks ops the mamba2 model needs: ssm_scan2, norm");
  EXPECT_EQ(refusal("lfm2-tiny"), "backend " + name +
                                      " lacks ops the lfm2 model needs: mul, attention with a "
                                      "sliding window (ABI 1.5)");
  EXPECT_EQ(refusal("nemotron-h-tiny"),
            "backend " + name +
                " lacks ops the nemotron_h_moe model needs: ssm_scan2, norm, unary, moe_gate "
                "with sigmoid routing or a selection bias (ABI 1.5)");
  EXPECT_EQ(refusal("hybrid-tiny"), "(loaded)");  // jamba needs nothing newer
}

INSTANTIATE_TEST_SUITE_P(FrozenHeaders, AbiMinorBackend, testing::Values(3, 4),
                         [](const auto& info) { return "v1_" + std::to_string(info.param); });

// A backend built against the frozen 1.5 headers: it runs the 2026 hybrids, and Gemma (GELU,
// tanh: 1.6 unary kinds it would refuse mid-forward) and gpt-oss (swiglu_oai, attention sinks)
// are refused at load, naming what they need.
TEST(AbiMinor5Backend, RunsTheHybridsAndIsRefusedForGemma) {
  const std::string name = "v1_5_backend";
  auto p = host().load(SY_PLUGIN_BACKEND, name);
  EXPECT_EQ(p->abi_version(), SY_MAKE_VERSION(1, 5));
  sy::Scheduler fw(host().load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"wait_window_ms", "0"}});
  EXPECT_EQ(run_with(name, fw).tokens, reference_run().tokens);
  auto load = [&](const std::string& preset) {
    auto f = sy::gguf::File::open(sy::test::preset_model_file(preset));
    sy::Backend b(p, {});
    try {
      sy::model::load_model(*f, b);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  EXPECT_EQ(load("qwen35moe-tiny"), "(loaded)");
  EXPECT_EQ(load("lfm2-tiny"), "(loaded)");
  EXPECT_EQ(load("gemma3-tiny"), "backend " + name +
                                     " lacks ops the gemma3 model needs: unary with gelu or "
                                     "tanh (ABI 1.6)");
  EXPECT_EQ(load("gpt-oss-tiny"), "backend " + name +
                                      " lacks ops the gpt-oss model needs: swiglu_oai, attention "
                                      "with sinks (ABI 1.6)");
  EXPECT_EQ(load("gemma2-tiny"), "backend " + name +
                                     " lacks ops the gemma2 model needs: unary with gelu or "
                                     "tanh (ABI 1.6), attention with logit soft-capping (ABI 1.6)");
}

TEST(Capabilities, NamesEveryKnownFlagAndShowsUnknownBits) {
  EXPECT_EQ(sy::capability_names(0), "none");
  EXPECT_EQ(sy::capability_names(SY_CAP_ZERO_COPY_HOST | SY_CAP_ASYNC), "zero_copy_host, async");
  EXPECT_EQ(sy::capability_names(SY_CAP_CHUNKED_PREFILL | SY_CAP_PREEMPTION),
            "chunked_prefill, preemption");
  EXPECT_EQ(sy::capability_names(SY_CAP_PREEMPTION | (1ull << 40)),
            "preemption, bit 0x10000000000");
}
