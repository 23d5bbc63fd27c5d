// Test helpers: the llama.cpp-written reference data in ../shared/ggml-reference (see its
// README): model files, MANIFEST.tsv and each model's logits.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sy::test {

inline std::filesystem::path reference_models() {
  return std::filesystem::path(SWITCHYARD_SOURCE_DIR) / ".." / "shared" / "ggml-reference" /
         "models";
}

// The tiny-llama-<TYPE>.gguf files llama-quantize wrote from tiny-llama-f32.gguf.
inline const std::vector<std::string>& reference_quant_types() {
  static const std::vector<std::string> types = {"Q4_0",   "Q4_1", "Q5_0",   "Q5_1",
                                                 "Q8_0",   "Q2_K", "Q3_K_M", "Q4_K_M",
                                                 "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"};
  return types;
}

struct ManifestRow {
  uint32_t n_vocab = 0;
  std::vector<int32_t> prompt;
};

// MANIFEST.tsv by file name; fails the calling test if it cannot be read.
inline std::map<std::string, ManifestRow> read_manifest() {
  std::map<std::string, ManifestRow> rows;
  std::ifstream in(reference_models() / "MANIFEST.tsv");
  EXPECT_TRUE(in.good()) << "cannot read " << (reference_models() / "MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string file, vocab, prompt;
    std::getline(cols, file, '\t');
    std::getline(cols, vocab, '\t');
    std::getline(cols, prompt, '\t');
    ManifestRow r;
    r.n_vocab = (uint32_t)std::stoul(vocab);
    std::istringstream ids(prompt);
    for (std::string id; std::getline(ids, id, ',');) r.prompt.push_back(std::stoi(id));
    rows[file] = r;
  }
  return rows;
}

// <model>.logits.f32: raw little-endian float32 rows.
inline std::vector<float> read_logits(const std::filesystem::path& model) {
  std::filesystem::path p = model;
  p.replace_extension(".logits.f32");
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << p;
  std::vector<float> v(std::filesystem::exists(p) ? std::filesystem::file_size(p) / 4 : 0);
  in.read(reinterpret_cast<char*>(v.data()), (std::streamsize)(v.size() * 4));
  return v;
}

// sum((ref - x)^2) / sum(ref^2), as llama.cpp's cross-backend tests compare.
inline double nmse(const std::vector<float>& ref, const std::vector<float>& x) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size() && i < x.size(); ++i) {
    num += ((double)ref[i] - x[i]) * ((double)ref[i] - x[i]);
    den += (double)ref[i] * ref[i];
  }
  return ref.size() == x.size() && den > 0 ? num / den : INFINITY;
}

}  // namespace sy::test
