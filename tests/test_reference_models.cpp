// Files written by llama.cpp (../shared/ggml-reference, see its README) against llama.cpp's own
// logits: the llama and jamba files with the optional tensors llama.cpp's loader accepts, and the
// F32 llama the quantised files derive from, on both CPU backends. Bound: the README's for F32
// and llama.cpp-written files, NMSE < 1e-6 over all prompt positions.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gguf/gguf.h"
#include "model/evaluate.h"
#include "model/model.h"
#include "nmse.h"
#include "tiny_model.h"

namespace fs = std::filesystem;

namespace {

const fs::path kModels =
    fs::path(SWITCHYARD_SOURCE_DIR) / ".." / "shared" / "ggml-reference" / "models";

struct Manifest {
  uint32_t n_vocab = 0;
  std::vector<int32_t> prompt;
};

// MANIFEST.tsv: file, n_vocab, prompt ids, greedy ids.
Manifest manifest(const std::string& file) {
  std::ifstream in(kModels / "MANIFEST.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string name, vocab, ids;
    std::getline(row, name, '\t');
    if (name != file) continue;
    std::getline(row, vocab, '\t');
    std::getline(row, ids, '\t');
    Manifest m;
    m.n_vocab = static_cast<uint32_t>(std::stoul(vocab));
    std::stringstream s(ids);
    for (std::string id; std::getline(s, id, ',');) m.prompt.push_back(std::stoi(id));
    return m;
  }
  ADD_FAILURE() << file << " is not in " << (kModels / "MANIFEST.tsv");
  return {};
}

std::vector<double> reference_logits(const std::string& file) {
  const fs::path p = kModels / (file.substr(0, file.size() - 5) + ".logits.f32");
  std::ifstream in(p, std::ios::binary);
  std::vector<float> v(fs::file_size(p) / sizeof(float));
  in.read(reinterpret_cast<char*>(v.data()), v.size() * sizeof(float));
  return sy::test::widen(v);
}

class ReferenceModel : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(ReferenceModel, LogitsAgreeWithLlamaCpp) {
  const auto& [file, backend] = GetParam();
  ASSERT_TRUE(fs::exists(kModels / file)) << "reference data missing: " << (kModels / file);
  const Manifest mf = manifest(file);
  auto f = sy::gguf::File::open(kModels / file);
  sy::Backend b(sy::test::host().load(SY_PLUGIN_BACKEND, backend), {});
  auto m = sy::model::load_model(*f, b);
  ASSERT_EQ(m->info().n_vocab, mf.n_vocab);
  const auto got = sy::model::evaluate(*m, b, mf.prompt, 0).logits;
  const auto want = reference_logits(file);
  ASSERT_EQ(got.size(), want.size());
  const double e = sy::test::nmse(got, want);
  EXPECT_LT(e, 1e-6);
  std::printf("%s on %s: NMSE %.3g over %zu positions\n", file.c_str(), backend.c_str(), e,
              mf.prompt.size());
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, ReferenceModel,
    testing::Combine(testing::Values("llamacpp-llama-dense.gguf", "llamacpp-jamba-dense.gguf",
                                     "tiny-llama-f32.gguf", "llamacpp-mamba2-dense.gguf",
                                     "llamacpp-granitehybrid-dense.gguf",
                                     "llamacpp-nemotron_h-dense.gguf",
                                     "llamacpp-nemotron_h_moe-dense.gguf",
                                     "llamacpp-falcon-h1-dense.gguf", "llamacpp-lfm2-dense.gguf",
                                     "llamacpp-qwen35-dense.gguf", "llamacpp-qwen35moe-moe.gguf",
                                     "llamacpp-qwen3next-moe.gguf", "llamacpp-qwen3-dense.gguf",
                                     "llamacpp-qwen3moe-moe.gguf", "llamacpp-qwen2-dense.gguf",
                                     "llamacpp-mistral3-dense.gguf", "llamacpp-granite-dense.gguf",
                                     "llamacpp-phi3-dense.gguf", "llamacpp-gemma3-dense.gguf",
                                     "llamacpp-gpt-oss-moe.gguf", "llamacpp-gemma4-dense.gguf"),
                     testing::Values("cpu_ref", "cpu_onednn")),
    [](const auto& info) {
      std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
      for (char& c : name)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

}  // namespace
