// NFC against the Unicode Character Database's own conformance file (NormalizationTest.txt,
// Debian's unicode-data, unpacked at configure time): for every line c1;c2;c3;c4;c5,
// c2 = NFC(c1) = NFC(c2) = NFC(c3) and c4 = NFC(c4) = NFC(c5). Then Qwen's vocabulary: a text
// and its decomposed spelling give the same ids, as Hugging Face's NFC normaliser makes them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gguf/gguf.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "vocab_reference.h"

namespace sy::text::detail {
namespace {

std::vector<uint32_t> field(const std::string& f) {
  std::vector<uint32_t> cps;
  std::istringstream in(f);
  for (std::string hex; in >> hex;) cps.push_back((uint32_t)std::stoul(hex, nullptr, 16));
  return cps;
}

TEST(Nfc, NormalizationTestConformance) {
  const std::filesystem::path path = SWITCHYARD_NORMALIZATION_TEST;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (unicode-data)";
  std::ifstream in(path);
  size_t lines = 0, failures = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '@') continue;
    std::vector<std::vector<uint32_t>> c;
    std::istringstream ls(line);
    for (std::string f; c.size() < 5 && std::getline(ls, f, ';');) c.push_back(field(f));
    ASSERT_EQ(c.size(), 5u) << line;
    ++lines;
    const bool ok = nfc(c[0]) == c[1] && nfc(c[1]) == c[1] && nfc(c[2]) == c[1] &&
                    nfc(c[3]) == c[3] && nfc(c[4]) == c[3];
    if (!ok && ++failures <= 5) ADD_FAILURE() << "NFC differs on: " << line;
  }
  std::printf("NormalizationTest.txt: %zu lines, %zu failures\n", lines, failures);
  EXPECT_GT(lines, 15000u);
  EXPECT_EQ(failures, 0u);
}

TEST(Nfc, QwenTokenizesTheDecomposedSpellingAsTheComposedOne) {
  const auto path = test::vocab_reference_dir() / "ggml-vocab-qwen2.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no reference data";
  const auto tok = Tokenizer::from_gguf(*gguf::File::open(path.string()));
  // e + U+0301, then the Hangul jamo of 한 (U+1112 U+1161 U+11AB), then A + U+030A + U+0323
  // (NFC: U+1EA0 U+030A, the dot below ordered first and composed).
  const std::string decomposed =
      "cafe\xcc\x81 \xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab A\xcc\x8a\xcc\xa3";
  const std::string composed = "caf\xc3\xa9 \xed\x95\x9c \xe1\xba\xa0\xcc\x8a";
  EXPECT_EQ(tok->encode(decomposed, false), tok->encode(composed, false));
  EXPECT_NE(tok->encode(decomposed, false).size(), 0u);
}

}  // namespace
}  // namespace sy::text::detail
