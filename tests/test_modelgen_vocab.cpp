// mkmodel --vocab: a random-weight model that takes a real vocabulary's tokenizer (every
// tokenizer.* key of llama.cpp's ggml-vocab-llama-bpe.gguf) tokenizes llama.cpp's test strings to
// exactly the ids the original tokenizer gives, so benchmarks of vocabulary-sized work (grammar
// masks, detokenizing) run on the real thing; a size that is not the vocabulary's is refused.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/gguf.h"
#include "modelgen/generator.h"
#include "switchyard/common/error.h"
#include "text/tokenizer.h"
#include "vocab_reference.h"

namespace sy::model {
namespace {

const std::filesystem::path kVocab = test::vocab_reference_dir() / "ggml-vocab-llama-bpe.gguf";

ModelShape small_shape() {
  ModelShape s;  // dense-tiny widths: the vocabulary is what the test is about
  s.vocab = kVocab.string();
  s.n_vocab = vocab_size(kVocab);
  return s;
}

TEST(ModelgenVocab, TakesTheFilesTokenizer) {
  if (!std::filesystem::exists(kVocab)) GTEST_SKIP() << "no reference data at " << kVocab;
  EXPECT_EQ(vocab_size(kVocab), 128256u);
  const auto out = std::filesystem::path(testing::TempDir()) / "modelgen-vocab.gguf";
  write_random_model(small_shape(), "f32", 3, out);

  const auto file = gguf::File::open(out);
  const auto source = gguf::File::open(kVocab);
  for (const auto& [key, value] : source->metadata())
    if (key.starts_with("tokenizer.")) {
      const gguf::Value* copied = file->find(key);
      ASSERT_NE(copied, nullptr) << key;
      EXPECT_TRUE(*copied == value) << key;
    }
  ASSERT_NE(file->find_tensor("token_embd.weight"), nullptr);
  EXPECT_EQ(file->find_tensor("token_embd.weight")->ne[1], 128256);

  const auto tok = text::Tokenizer::from_gguf(*file);
  const auto cases = test::vocab_cases("llama-bpe");
  ASSERT_EQ(cases.size(), 46u);
  for (const auto& c : cases)
    EXPECT_EQ(test::join_ids(tok->encode(c.text, false)), c.ids) << c.text;
  std::filesystem::remove(out);
}

TEST(ModelgenVocab, RefusesAnotherSize) {
  if (!std::filesystem::exists(kVocab)) GTEST_SKIP() << "no reference data at " << kVocab;
  ModelShape s = small_shape();
  s.n_vocab = 4096;
  const auto out = std::filesystem::path(testing::TempDir()) / "modelgen-vocab-bad.gguf";
  try {
    write_random_model(s, "f32", 3, out);
    FAIL() << "a size other than the vocabulary's was taken";
  } catch (const sy::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "n_vocab is 4096 but " + kVocab.string() + " has 128256 tokens");
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace sy::model
