// Test helpers: a tiny generated llama model loaded on a named backend with a paged cache.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "engine/engine.h"
#include "gguf/gguf.h"
#include "host/backend.h"
#include "host/plugin_host.h"
#include "host/scheduler.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "modelgen/generator.h"

namespace sy::test {

namespace fs = std::filesystem;

// The in-tree plugins, then the test plugins (GPU emulators, deliberately broken backends).
inline sy::PluginHost& host() {
  static sy::PluginHost h({SWITCHYARD_PLUGIN_DIR, SWITCHYARD_TEST_PLUGIN_DIR});
  return h;
}

// A tiny generated model per (dtype, tied) written once.
inline const fs::path& model_file(const std::string& dtype, bool tied = false) {
  static std::map<std::string, fs::path> files;
  const std::string key = dtype + (tied ? "-tied" : "");
  auto it = files.find(key);
  if (it != files.end()) return it->second;
  sy::model::ModelShape s = sy::model::preset_shape("dense-tiny");
  s.tied_output = tied;
  s.n_embd = 64;
  s.n_ff = 96;
  s.n_layer = 2;
  const fs::path p = fs::path(testing::TempDir()) / ("sy-llama-" + key + ".gguf");
  sy::model::write_random_llama(s, dtype, 42, p);
  return files[key] = p;
}

// A generated model of any preset (dense-tiny, hybrid-tiny, mamba-tiny, ...) in `dtype`, written
// once per process as sy-<prefix>-<preset>-<dtype>-s<seed>.gguf, under a per-pid name and renamed
// into place (ctest runs the tests of one binary as parallel processes).
inline const fs::path& generated_model_file(const std::string& preset, const std::string& dtype,
                                            uint64_t seed, const std::string& prefix) {
  static std::map<std::string, fs::path> files;
  const std::string key = prefix + "-" + preset + "-" + dtype + "-s" + std::to_string(seed);
  if (auto it = files.find(key); it != files.end()) return it->second;
  const fs::path dir = testing::TempDir();
  const fs::path p = dir / ("sy-" + key + ".gguf");
  const fs::path tmp = dir / ("sy-" + key + "-" + std::to_string(::getpid()) + ".gguf");
  sy::model::write_random_model(sy::model::preset_shape(preset), dtype, seed, tmp);
  fs::rename(tmp, p);
  return files[key] = p;
}
inline const fs::path& preset_model_file(const std::string& preset, uint64_t seed = 3) {
  return generated_model_file(preset, "f32", seed, "preset");
}

// A backend's params for exact prefill logits: cpu_onednn with every matmul on its GEMM over
// dequantised panels (F32 activations, as cpu_ref's); its default integer kernels quantize the
// activations to 8-bit blocks as llama.cpp's do (test_reference_logits bounds that error).
inline sy::Params exact_params(const std::string& backend) {
  if (backend == "cpu_onednn") return {{"gemv_max_m", "0"}};
  return {};
}

struct Loaded {
  std::unique_ptr<sy::gguf::File> file;
  std::unique_ptr<sy::Backend> backend;
  std::unique_ptr<sy::model::Model> model;
  std::unique_ptr<sy::model::KvCache> cache;
  // `state_slots`: sequences a recurrent (SSM) model can hold at once; nothing for llama.
  // `window_blocks`: the sliding-window layers' own pool (0: they share `blocks`).
  Loaded(const fs::path& p, const std::string& backend_name, uint32_t blocks = 64,
         uint32_t kv_dtype = SY_DTYPE_F32, const sy::Params& params = {}, uint32_t state_slots = 4,
         uint32_t window_blocks = 0) {
    file = sy::gguf::File::open(p);
    backend = std::make_unique<sy::Backend>(host().load(SY_PLUGIN_BACKEND, backend_name), params);
    model = sy::model::load_model(*file, *backend);
    model->reserve_state_slots(state_slots);
    const auto& mi = model->info();
    if (window_blocks)
      cache =
          std::make_unique<sy::model::KvCache>(*backend, mi.kv_row_widths, 16, blocks, kv_dtype,
                                               sy::model::WindowPool{mi.kv_windows, window_blocks});
    else
      cache = std::make_unique<sy::model::KvCache>(*backend, mi.n_attn_layers, mi.kv_row_width, 16,
                                                   blocks, kv_dtype);
  }
  // All-position logits of one sequence, prefilled in one pass.
  std::vector<float> prefill(const std::vector<int32_t>& toks) {
    std::vector<int32_t> blocks;
    EXPECT_TRUE(cache->pool().allocate(cache->blocks_for(toks.size()), blocks));
    sy::model::SeqInput in{toks.data(), uint32_t(toks.size()), 0, &blocks, true, 0};
    auto out = model->forward({in}, *cache, true);
    cache->pool().release(blocks);
    return out;
  }
  // All-position logits of one sequence through the cache: n_prefill tokens in one pass, then
  // one at a time (the decode path: M = 1 matmuls).
  std::vector<float> prefill_then_decode(const std::vector<int32_t>& toks, uint32_t n_prefill) {
    std::vector<int32_t> blocks;
    EXPECT_TRUE(cache->pool().allocate(cache->blocks_for(toks.size()), blocks));
    sy::model::SeqInput first{toks.data(), n_prefill, 0, &blocks, true, 0};
    auto step = model->forward({first}, *cache, true);
    std::vector<float> out(step.begin(), step.end());
    for (uint32_t p = n_prefill; p < toks.size(); ++p) {
      sy::model::SeqInput d{&toks[p], 1, p, &blocks, true, 0};
      step = model->forward({d}, *cache);
      out.insert(out.end(), step.begin(), step.end());
    }
    cache->pool().release(blocks);
    return out;
  }
};

// Runs prompts to completion through the engine with a scheduler plugin; returns each request's
// output tokens (greedy unless the spec says otherwise), checking every plan was valid.
struct EngineRun {
  std::string backend = "cpu_ref";
  std::string scheduler = "fixed_window";
  sy::Params params;
  sy::engine::EngineLimits limits;
  uint32_t kv_blocks = 64;
  // The sliding-window layers' own pool, of the size the engine needs (KvCache::window_pool_size).
  bool window_cache = false;
  uint32_t peak_window_blocks = 0;  // held at once, sampled after every step
  uint32_t max_new = 12;
  fs::path model;
  uint64_t preemptions = 0;
  uint64_t prefix_hit_tokens = 0;
  uint32_t snapshot_slots = 0;             // the engine's hybrid prefix-cache budget
  std::map<std::string, double> counters;  // the engine's own, after the run
  bool stop_at_eos = false;  // stops at limits.eos
  // Called after every step with the engine and the request ids (to cancel some mid-run).
  std::function<void(sy::engine::Engine&, const std::vector<uint64_t>&, int step)> after_step;

  std::vector<std::vector<int32_t>> run(const std::vector<std::vector<int32_t>>& prompts) {
    const fs::path file = model.empty() ? model_file("f32") : model;
    uint32_t window_blocks = 0;
    if (window_cache) {
      const auto desc = sy::model::read_model_desc(*sy::gguf::File::open(file));
      window_blocks = sy::model::KvCache::window_pool_size(desc.window, 16, limits.max_seqs,
                                                           limits.max_batch_tokens);
    }
    Loaded m(file, backend, kv_blocks, SY_DTYPE_F32, {}, 4, window_blocks);
    const auto& window_pool = m.cache->window_pool();
    sy::Scheduler s(host().load(SY_PLUGIN_SCHEDULER, scheduler), params);
    sy::engine::Engine e(*m.model, *m.cache, s, limits);
    std::vector<uint64_t> ids;
    for (const auto& p : prompts) {
      sy::engine::RequestSpec spec;
      spec.prompt = p;
      spec.max_new_tokens = max_new;
      spec.stop_at_eos = stop_at_eos;
      ids.push_back(e.submit(spec));
    }
    // Bounded, so a scheduler that stops making progress fails the test instead of hanging it.
    for (int steps = 0; !e.idle(); ++steps) {
      if (steps >= 20000) {
        ADD_FAILURE() << scheduler << " stopped making progress";
        return {};
      }
      if (e.step().n_seqs == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (after_step) after_step(e, ids, steps);
      peak_window_blocks =
          std::max(peak_window_blocks, window_pool.total() - window_pool.free_count());
    }
    EXPECT_EQ(e.invalid_plans(), 0u) << scheduler;
    EXPECT_EQ(m.cache->pool().free_count(), m.cache->pool().total()) << "blocks leaked";
    EXPECT_EQ(window_pool.free_count(), window_pool.total()) << "window blocks leaked";
    if (e.snapshots()) {
      EXPECT_EQ(e.snapshots()->in_use(), 0u) << "state snapshots left pinned";
    }
    counters = e.counters().snapshot();
    snapshot_slots = e.snapshot_slots();
    std::vector<std::vector<int32_t>> out;
    for (auto id : ids) {
      const auto& r = e.request(id);
      preemptions += r.num_preemptions;
      prefix_hit_tokens += r.prefix_hit_tokens;
      out.push_back(r.output);
    }
    return out;
  }
};

inline std::vector<int32_t> sample_tokens(int n, int vocab, int salt = 0) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 37 + salt * 11 + 5) % vocab;
  return t;
}

}  // namespace sy::test
