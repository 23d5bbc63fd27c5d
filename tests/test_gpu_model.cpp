// Whole models on the GPU backends against cpu_ref: a dense llama in every weight dtype and a
// hybrid jamba (Mamba + attention + MoE), prefilled and then decoded token by token through the
// KV cache and the recurrent state. The figure is llama.cpp's cross-backend measure, NMSE of the
// logits, with the bounds cpu_onednn meets against cpu_ref (NMSE < 1e-8, max |diff| < 1e-3).
// The emulators run everywhere; cuda / hip skip with "no GPU device" where there is none.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "gguf/gguf.h"
#include "gpu_fixture.h"
#include "host/plugin_host.h"
#include "model/generator.h"
#include "model/model.h"

namespace fs = std::filesystem;

namespace {

sy::PluginHost& host() {
  static sy::PluginHost h({SWITCHYARD_PLUGIN_DIR, SWITCHYARD_TEST_PLUGIN_DIR});
  return h;
}

const fs::path& model_file(const std::string& preset, const std::string& dtype) {
  static std::map<std::string, fs::path> files;
  const std::string key = preset + "-" + dtype;
  if (auto it = files.find(key); it != files.end()) return it->second;
  const fs::path p = fs::path(testing::TempDir()) / ("sy-gpu-" + key + ".gguf");
  sy::model::write_random_model(sy::model::preset_shape(preset), dtype, 11, p);
  return files[key] = p;
}

// A model on one backend; run() prefills n_prefill tokens, then decodes the rest one at a
// time, and returns the logits of every position.
struct Loaded {
  std::unique_ptr<sy::gguf::File> file;
  std::unique_ptr<sy::Backend> backend;
  std::unique_ptr<sy::model::Model> model;
  std::unique_ptr<sy::model::KvCache> cache;
  Loaded(const fs::path& p, const std::string& plugin) {
    file = sy::gguf::File::open(p);
    backend = std::make_unique<sy::Backend>(host().load(SY_PLUGIN_BACKEND, plugin), sy::Params{});
    if (!backend->device().available) return;
    model = sy::model::load_model(*file, *backend);
    model->reserve_state_slots(1);
    const auto& mi = model->info();
    cache =
        std::make_unique<sy::model::KvCache>(*backend, mi.n_attn_layers, mi.kv_row_width, 16, 16);
  }
  std::vector<float> run(const std::vector<int32_t>& toks, uint32_t n_prefill) {
    std::vector<int32_t> blocks;
    EXPECT_TRUE(cache->pool().allocate(cache->blocks_for(toks.size()), blocks));
    sy::model::SeqInput first{toks.data(), n_prefill, 0, &blocks, true, 0};
    std::vector<float> out = model->forward({first}, *cache, true);
    for (uint32_t p = n_prefill; p < toks.size(); ++p) {
      sy::model::SeqInput d{&toks[p], 1, p, &blocks, true, 0};
      const auto step = model->forward({d}, *cache);
      out.insert(out.end(), step.begin(), step.end());
    }
    cache->pool().release(blocks);
    return out;
  }
};

struct Agreement {
  double nmse = 0, max_abs = 0;
};
Agreement compare(const std::vector<float>& got, const std::vector<float>& ref) {
  double num = 0, den = 0, mx = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = (double)got[i] - ref[i];
    num += d * d, den += (double)ref[i] * ref[i], mx = std::max(mx, std::fabs(d));
  }
  return {num / den, mx};
}

class GpuModel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "none") GTEST_SKIP() << "no GPU plugin in this build";
    sy::test::Handle h(sy::test::gpu_plugin(GetParam()).iface());
    SY_SKIP_WITHOUT_GPU(h);
  }
  void expect_agrees(const std::string& preset, const std::string& dtype, uint32_t n_prefill,
                     uint32_t n_total) {
    expect_agrees(model_file(preset, dtype), preset + " " + dtype, n_prefill, n_total, 259);
  }
  void expect_agrees(const fs::path& file, const std::string& what, uint32_t n_prefill,
                     uint32_t n_total, int32_t n_vocab) {
    SCOPED_TRACE(what);
    Loaded gpu(file, GetParam()), ref(file, "cpu_ref");
    std::vector<int32_t> toks(n_total);
    for (uint32_t i = 0; i < n_total; ++i) toks[i] = (int32_t)((i * 37 + 5) % n_vocab);
    const auto g = gpu.run(toks, n_prefill), r = ref.run(toks, n_prefill);
    ASSERT_EQ(g.size(), r.size());
    const Agreement a = compare(g, r);
    EXPECT_LT(a.nmse, 1e-8);
    EXPECT_LT(a.max_abs, 1e-3);
    std::printf("[ logits ] %s %s vs cpu_ref: NMSE %.2e, max |diff| %.2e over %zu logits\n",
                GetParam().c_str(), what.c_str(), a.nmse, a.max_abs, g.size());
  }
};

std::string name_of(const ::testing::TestParamInfo<std::string>& p) {
  return p.param;
}

TEST_P(GpuModel, DenseLogitsAgreeWithCpuRefInEveryDtype) {
  for (const char* dtype : {"f32", "f16", "bf16", "q8_0"})
    expect_agrees("dense-tiny", dtype, 24, 30);
}

TEST_P(GpuModel, HybridLogitsAgreeWithCpuRef) {
  for (const char* dtype : {"f32", "q8_0"}) expect_agrees("hybrid-tiny", dtype, 20, 26);
}

// llama.cpp-written files with biases, `.scale` tensors and RoPE frequency factors
// (../shared/ggml-reference): the GPU's bias_scale and rope_ext in a whole model.
TEST_P(GpuModel, LlamaCppFilesWithOptionalTensorsAgreeWithCpuRef) {
  const fs::path dir =
      fs::path(SWITCHYARD_SOURCE_DIR) / ".." / "shared" / "ggml-reference" / "models";
  for (const char* f : {"llamacpp-llama-dense.gguf", "llamacpp-jamba-dense.gguf"}) {
    ASSERT_TRUE(fs::exists(dir / f)) << "reference data missing: " << (dir / f);
    expect_agrees(dir / f, f, 20, 26, 128);
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuModel, ::testing::ValuesIn(sy::test::gpu_plugins(true)), name_of);

}  // namespace
