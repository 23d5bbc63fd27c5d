// llama.cpp's tokenizer test vectors in ../shared/ggml-reference/vocab (see its README): each
// vocabulary's test strings and the ids the original tokenizer gives them.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sy::test {

inline std::filesystem::path vocab_reference_dir() {
  return std::filesystem::path(SWITCHYARD_SOURCE_DIR) / ".." / "shared" / "ggml-reference" /
         "vocab";
}

// The vocabularies the README lists: llama.cpp's seven, then Llama 3's and Qwen 2/3's.
inline const std::vector<std::string>& reference_vocabs() {
  static const std::vector<std::string> v = {"llama-spm", "phi-3",        "gpt-2",
                                             "mpt",       "deepseek-llm", "starcoder",
                                             "falcon",    "llama-bpe",    "qwen2"};
  return v;
}

struct VocabCase {
  std::string text;
  std::string ids;  // as in the .out file: " id id ..."
};

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The .inp strings (separated by "\n__ggml_vocab_test__\n", the file ending with one) paired with
// the .out lines; empty when the files are missing.
inline std::vector<VocabCase> vocab_cases(
    const std::string& name, const std::filesystem::path& dir = vocab_reference_dir()) {
  const auto base = dir / ("ggml-vocab-" + name + ".gguf");
  const std::string inp = read_all(base.string() + ".inp"), out = read_all(base.string() + ".out");
  std::vector<std::string> texts, lines;
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (size_t p = 0, m; (m = inp.find(sep, p)) != std::string::npos; p = m + sep.size())
    texts.push_back(inp.substr(p, m - p));
  std::istringstream os(out);
  for (std::string l; std::getline(os, l);) lines.push_back(l);
  std::vector<VocabCase> cases;
  for (size_t i = 0; i < texts.size() && i < lines.size(); ++i)
    cases.push_back({texts[i], lines[i]});
  if (texts.size() != lines.size()) cases.clear();  // mismatched files: fail loudly in the test
  return cases;
}

inline std::string join_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += " " + std::to_string(id);
  return s;
}

}  // namespace sy::test
