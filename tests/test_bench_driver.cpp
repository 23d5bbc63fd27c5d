// The replay driver on a tiny generated model: every request is recorded with consistent
// timestamps, the steps account for every token forwarded, the busy time is split over the
// requests without loss, and memory peaks agree with the cache's geometry.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "bench/driver.h"
#include "bench/metrics.h"
#include "config/config.h"
#include "modelgen/generate_hook.h"

using namespace sy::bench;

namespace {

sy::Config tiny_config() {
  const auto model = std::filesystem::temp_directory_path() / "sy-bench-driver-tiny.gguf";
  return sy::parse_config(
      std::string("plugin_dirs = [\"") + SWITCHYARD_PLUGIN_DIR + "\"]\nmodels_dir = \"" +
          model.parent_path().string() + "\"\n[model]\npath = \"" + model.string() +
          "\"\ngenerate = \"dense-tiny\"\n"
          "[backend]\nplugin = \"cpu_ref\"\n"
          "[scheduler]\nplugin = \"fixed_window\"\nmax_batch = 4\nwait_window_ms = 1\n"
          "[engine]\nkv_block_size = 16\n",
      "tiny.toml");
}

}  // namespace

TEST(BenchDriver, ReplayRecordsEveryRequestAndStep) {
  WorkloadSpec w;
  w.seed = 5;
  w.requests = 12;
  w.rate = 200;
  w.simple_ratio = 0.5;
  w.shared_prefix_ratio = 0.5;
  w.shared_prefix_len = 8;
  w.simple.prompt = {LengthDist::Kind::uniform, 0, 4, 16};
  w.complex.prompt = {LengthDist::Kind::uniform, 0, 20, 40};
  w.simple.output = {LengthDist::Kind::uniform, 0, 2, 6};
  w.complex.output = {LengthDist::Kind::uniform, 0, 3, 8};
  auto items = generate_workload(w);
  WorkItem too_long = items.back();  // dense-tiny's context is 512
  too_long.prompt.assign(600, 7);
  items.push_back(too_long);

  sy::modelgen::install_generate_hook();  // the config says generate
  auto variant = sy::engine::Variant::build(tiny_config());
  DriverOptions opt;
  size_t last_progress = 0;
  opt.on_progress = [&](size_t done, size_t total) {
    EXPECT_EQ(total, items.size());
    EXPECT_GT(done, last_progress);
    last_progress = done;
  };
  const RunLog log = replay(*variant, items, opt);
  EXPECT_FALSE(log.timed_out);
  EXPECT_EQ(last_progress, items.size());
  ASSERT_EQ(log.requests.size(), items.size());

  uint64_t expected_tokens = 0;
  uint32_t max_blocks = 0;
  for (size_t i = 0; i + 1 < items.size(); ++i) {
    const RequestRecord& r = log.requests[i];
    ASSERT_TRUE(r.ok) << i << ": " << r.error;
    EXPECT_EQ(r.simple, items[i].simple);
    EXPECT_EQ(r.prompt_len, items[i].prompt.size());
    EXPECT_EQ(r.token_ns.size(), items[i].max_new_tokens);  // EOS ignored
    EXPECT_EQ(r.arrival_ns, log.start_ns + items[i].arrival_ns);
    EXPECT_LE(r.arrival_ns, r.first_scheduled_ns);
    EXPECT_LE(r.first_scheduled_ns, r.token_ns.front());
    EXPECT_TRUE(std::is_sorted(r.token_ns.begin(), r.token_ns.end()));
    EXPECT_EQ(r.finish_ns, r.token_ns.back());
    EXPECT_GT(r.cost_ns, 0);
    // The last sampled token is never forwarded; fixed_window never preempts.
    expected_tokens += r.prompt_len + r.token_ns.size() - 1;
    max_blocks = std::max<uint32_t>(max_blocks, (r.prompt_len + r.token_ns.size() + 15) / 16);
  }
  const RequestRecord& refused = log.requests.back();
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error.rfind("refused: prompt of 600 tokens", 0), 0u) << refused.error;

  uint64_t forwarded = 0, prefill = 0, decode = 0;
  double busy = 0, attributed = 0;
  for (const auto& s : log.steps) {
    forwarded += s.n_tokens;
    prefill += s.n_prefill_tokens;
    decode += s.n_decode;
    if (s.n_tokens) busy += s.dur_ns;
    EXPECT_LE(s.kv_used_blocks, variant->cache->pool().total());
  }
  for (const auto& r : log.requests) attributed += r.cost_ns;
  EXPECT_EQ(forwarded, expected_tokens);
  EXPECT_EQ(prefill + decode, expected_tokens);
  EXPECT_NEAR(attributed, busy, 1e-6 * busy);

  const MemoryPeaks& m = log.memory;
  EXPECT_EQ(m.kv_block_bytes, variant->cache->bytes() / variant->cache->pool().total());
  EXPECT_EQ(m.state_bytes_per_seq, 0u);  // dense: no recurrent state
  EXPECT_GE(m.peak_kv_blocks, max_blocks);
  EXPECT_EQ(m.peak_bytes, uint64_t(m.peak_kv_blocks) * m.kv_block_bytes);
  ASSERT_EQ(m.peak_by_path.size(), 1u);  // nothing routed: every request on path 0
  EXPECT_LE(m.peak_by_path.at(0), m.peak_bytes);

  const ServingMetrics s = serving_metrics(log, Slo{});
  EXPECT_EQ(s.completed, items.size() - 1);
  EXPECT_EQ(s.failed, 1u);
}

// Gemma 2's local layers in a pool of their own: the report's memory counts their blocks apart,
// the cache is smaller than with swa_cache = "full", and the global layers' blocks are smaller.
// (Peaks in use are not compared: they depend on how the timed replay batched the requests.)
TEST(BenchDriver, SlidingWindowLayersCountTheirOwnPool) {
  WorkloadSpec w;
  w.seed = 9;
  w.requests = 8;
  w.rate = 200;
  w.complex.prompt = {LengthDist::Kind::uniform, 0, 40, 90};
  w.complex.output = {LengthDist::Kind::uniform, 0, 4, 8};
  const auto items = generate_workload(w);
  sy::modelgen::install_generate_hook();
  const auto model = std::filesystem::temp_directory_path() / "sy-bench-driver-gemma2-tiny.gguf";
  auto config = [&](const char* swa) {
    return sy::parse_config(
        std::string("plugin_dirs = [\"") + SWITCHYARD_PLUGIN_DIR + "\"]\nmodels_dir = \"" +
            model.parent_path().string() + "\"\n[model]\npath = \"" + model.string() +
            "\"\ngenerate = \"gemma2-tiny\"\n[backend]\nplugin = \"cpu_ref\"\n" +
            "[scheduler]\nplugin = \"fixed_window\"\nmax_batch = 4\nwait_window_ms = 1\n" +
            "[engine]\nmax_seqs = 4\nmax_batch_tokens = 256\nmax_context = 1024\nswa_cache = \"" +
            swa + "\"\n",
        "gemma2.toml");
  };
  auto windowed = sy::engine::Variant::build(config("window"));
  auto full = sy::engine::Variant::build(config("full"));
  ASSERT_TRUE(windowed->cache->windowed());
  ASSERT_FALSE(full->cache->windowed());
  const MemoryPeaks mw = replay(*windowed, items, DriverOptions{}).memory;
  const MemoryPeaks mf = replay(*full, items, DriverOptions{}).memory;

  // Window 8, blocks of 16, 4 sequences, passes of up to 256 tokens: 4 * 3 + 16 blocks.
  EXPECT_EQ(windowed->cache->window_pool().total(), 28u);
  EXPECT_EQ(mw.kv_window_block_bytes, 2 * mw.kv_block_bytes);  // two local layers, one global
  EXPECT_EQ(mf.kv_window_block_bytes, 0u);
  EXPECT_EQ(mf.kv_block_bytes, 3 * mw.kv_block_bytes);
  EXPECT_EQ(mw.kv_allocated_bytes, windowed->cache->bytes());
  EXPECT_LT(mw.kv_allocated_bytes, mf.kv_allocated_bytes);
  EXPECT_GT(mw.peak_kv_window_blocks, 0u);
  EXPECT_LE(mw.peak_kv_window_blocks, 28u);
  EXPECT_EQ(mf.peak_kv_window_blocks, 0u);
  EXPECT_LE(mw.peak_bytes, mw.peak_kv_blocks * mw.kv_block_bytes +
                               mw.peak_kv_window_blocks * mw.kv_window_block_bytes);
}
