// Whole models on the GPU backends against cpu_ref: a dense llama in every weight dtype and a
// hybrid jamba (Mamba + attention + MoE), prefilled and then decoded token by token through the
// KV cache and the recurrent state. The figure is llama.cpp's cross-backend measure, NMSE of the
// logits, with the bounds cpu_onednn meets against cpu_ref (NMSE < 1e-8, max |diff| < 1e-3).
// The emulators run everywhere; cuda / hip skip with "no GPU device" where there is none.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "gguf/gguf.h"
#include "gpu_fixture.h"
#include "host/plugin_host.h"
#include "model/evaluate.h"
#include "model/model.h"
#include "modelgen/generator.h"
#include "tiny_model.h"

namespace fs = std::filesystem;

namespace {

const fs::path& model_file(const std::string& preset, const std::string& dtype) {
  return sy::test::generated_model_file(preset, dtype, 11, "gpu");
}

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
    sy::test::Loaded gpu(file, GetParam(), 16, SY_DTYPE_F32, {}, 1),
        ref(file, "cpu_ref", 16, SY_DTYPE_F32, {}, 1);
    std::vector<int32_t> toks(n_total);
    for (uint32_t i = 0; i < n_total; ++i) toks[i] = (int32_t)((i * 37 + 5) % n_vocab);
    const auto g = gpu.prefill_then_decode(toks, n_prefill),
               r = ref.prefill_then_decode(toks, n_prefill);
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

// The 2026 families, whole: llama.cpp-written files of each against llama.cpp's own logits (the
// prompt in one batch), and each family's tiny preset prefilled and decoded against cpu_ref
// (the recurrent state carried across decode steps).
TEST_P(GpuModel, FamilyReferenceFilesAgreeWithLlamaCpp) {
  const fs::path dir =
      fs::path(SWITCHYARD_SOURCE_DIR) / ".." / "shared" / "ggml-reference" / "models";
  const std::vector<int32_t> prompt = {1,  17, 42, 99, 5,   23, 64, 100, 7, 3,  88, 12,
                                       45, 77, 2,  9,  120, 61, 31, 33,  8, 70, 19, 4};
  for (const char* f :
       {"llamacpp-mamba2-dense", "llamacpp-granitehybrid-dense", "llamacpp-nemotron_h-dense",
        "llamacpp-nemotron_h_moe-dense", "llamacpp-falcon-h1-dense", "llamacpp-lfm2-dense",
        "llamacpp-qwen35-dense", "llamacpp-qwen35moe-moe", "llamacpp-qwen3next-moe",
        "llamacpp-qwen3-dense", "llamacpp-qwen3moe-moe", "llamacpp-qwen2-dense",
        "llamacpp-mistral3-dense", "llamacpp-granite-dense", "llamacpp-phi3-dense",
        "llamacpp-gemma3-dense", "llamacpp-gpt-oss-moe", "llamacpp-gemma4-dense"}) {
    SCOPED_TRACE(f);
    const fs::path model = dir / (std::string(f) + ".gguf");
    ASSERT_TRUE(fs::exists(model)) << "reference data missing: " << model;
    auto file = sy::gguf::File::open(model);
    sy::Backend b(sy::test::host().load(SY_PLUGIN_BACKEND, GetParam()), {});
    auto m = sy::model::load_model(*file, b);
    const auto got = sy::model::evaluate(*m, b, prompt, 0).logits;
    const fs::path ref = dir / (std::string(f) + ".logits.f32");
    std::vector<float> want(fs::file_size(ref) / sizeof(float));
    std::ifstream in(ref, std::ios::binary);
    in.read(reinterpret_cast<char*>(want.data()), want.size() * sizeof(float));
    ASSERT_EQ(got.size(), want.size());
    const Agreement a = compare(got, want);
    EXPECT_LT(a.nmse, 1e-6);
    std::printf("[ logits ] %s %s vs llama.cpp: NMSE %.2e\n", GetParam().c_str(), f, a.nmse);
  }
}

TEST_P(GpuModel, FamilyPresetsAgreeWithCpuRef) {
  for (const char* preset :
       {"mamba2-tiny",    "granitehybrid-tiny", "nemotron-h-tiny", "nemotron-h-dense-tiny",
        "falcon-h1-tiny", "lfm2-tiny",          "lfm2moe-tiny",    "qwen35-tiny",
        "qwen35moe-tiny", "qwen3next-tiny",     "qwen3-tiny",      "qwen3moe-tiny",
        "qwen2-tiny",     "qwen2moe-tiny",      "mistral3-tiny",   "mistral3moe-tiny",
        "granite-tiny",   "granitemoe-tiny",    "phi3-tiny",       "gemma2-tiny",
        "gemma3-tiny",    "gpt-oss-tiny",       "gemma4-tiny",     "gemma4moe-tiny",
        "gemma4e-tiny"})
    expect_agrees(preset, "f32", 20, 30);
  expect_agrees("gpt-oss-tiny", "mxfp4_moe", 20, 30);  // MXFP4 experts
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuModel, ::testing::ValuesIn(sy::test::gpu_plugins(true)), name_of);

}  // namespace
