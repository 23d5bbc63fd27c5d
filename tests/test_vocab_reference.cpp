// The reference vocabularies (../shared/ggml-reference/vocab: llama.cpp's seven, Llama 3's and
// Qwen 2/3's): every test string tokenizes to exactly the ids the original tokenizer gives (no
// BOS, no special parsing); Qwen 3.5's pre-tokenizer against llama.cpp's; and on
// phi-3's real vocabulary, control tokens are parsed only where asked (a rendered chat
// template's markup, never a message) and the end-of-generation set is eos plus <|end|>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "gguf/gguf.h"
#include "gguf_copy.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"
#include "vocab_reference.h"

namespace sy::text {
namespace {

using Ids = std::vector<int32_t>;

std::unique_ptr<Tokenizer> load(const std::string& name) {
  const auto p = test::vocab_reference_dir() / ("ggml-vocab-" + name + ".gguf");
  auto f = gguf::File::open(p.string());
  return Tokenizer::from_gguf(*f);
}

bool have_reference() {
  return std::filesystem::exists(test::vocab_reference_dir() / "ggml-vocab-phi-3.gguf");
}

// Each case's text encodes (no BOS, no special parsing) to exactly its ids; prints the count.
void expect_every_string(const Tokenizer& tok, const std::vector<test::VocabCase>& cases,
                         const std::string& name) {
  size_t exact = 0;
  for (const auto& c : cases) {
    const std::string got = test::join_ids(tok.encode(c.text, false));
    if (got == c.ids)
      ++exact;
    else
      ADD_FAILURE() << name << ": [" << c.text << "]\n got:" << got << "\nwant:" << c.ids;
  }
  std::printf("%s: %zu/%zu strings exact\n", name.c_str(), exact, cases.size());
  EXPECT_EQ(exact, cases.size());
}

class ReferenceVocab : public testing::TestWithParam<std::string> {};

TEST_P(ReferenceVocab, EveryTestStringExact) {
  if (!have_reference()) GTEST_SKIP() << "no reference data at " << test::vocab_reference_dir();
  const auto tok = load(GetParam());
  const auto cases = test::vocab_cases(GetParam());
  ASSERT_EQ(cases.size(), 46u) << "the .inp and .out files should pair 46 strings";
  expect_every_string(*tok, cases, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, ReferenceVocab, testing::ValuesIn(test::reference_vocabs()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The 2026 vocabularies (tests/fixtures/vocab, see its README): GPT-4o's (o200k), DeepSeek V3's
// and Gemma 3's SentencePiece one give every string Hugging Face's ids, but one of Gemma 3's where
// the file's token types rule, as in llama.cpp: </s> is a control token by its text (llama.cpp's
// end-of-generation list) and <mask> by the file, so neither is matched in plain text.
// gemma-4 is Gemma 4's tokenizer model ("gemma4") over Gemma 3's pieces, as llama.cpp's converter
// writes it; its strings include llama.cpp's own Gemma 4 test strings, whose ids (from the real
// Gemma 4 vocabulary) are these. Two markup strings take llama.cpp's ids: that converter types
// Hugging Face's non-special added tokens (<table>, <s>, [multimodal]) NORMAL, so they are not
// matched whole.
class FixtureVocab : public testing::TestWithParam<std::string> {};

TEST_P(FixtureVocab, EveryTestStringAsHuggingFace) {
  const std::filesystem::path dir = SWITCHYARD_VOCAB_2026_DIR;
  const auto f = gguf::File::open((dir / ("ggml-vocab-" + GetParam() + ".gguf")).string());
  const auto tok = Tokenizer::from_gguf(*f);
  auto cases = test::vocab_cases(GetParam(), dir);
  ASSERT_EQ(cases.size(), 71u) << "the .inp and .out files should pair 71 strings";
  if (GetParam() == "gemma-3")
    for (auto& c : cases)
      if (c.text == "<s>strike</s> <mask> [multimodal]")
        c.ids = " 203 110095 954 236751 236813 655 1080 236813 236743 5";  // llama.cpp's
  if (GetParam() == "gemma-4")                                             // llama.cpp's
    for (auto& c : cases) {
      if (c.text == "<s>strike</s> <mask> [multimodal]")
        c.ids =
            " 236820 236751 236813 110095 954 236751 236813 655 1080 236813 870 8606 98624 236842";
      if (c.text == "<table><tr><td>cell</td></tr></table> <b>bold</b> <h1>Title</h1>")
        c.ids =
            " 236820 5127 1798 1168 1798 2004 236813 5447 954 2004 2588 1168 2588 5127 236813 655"
            " 236763 236813 15640 954 236763 236813 655 236754 236770 236813 7396 954 236754 236770"
            " 236813";
    }
  expect_every_string(*tok, cases, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, FixtureVocab,
                         testing::Values("gpt-4o", "deepseek-v3", "gemma-3", "gemma-4"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The 2026 vocabularies as llama.cpp (0253fb21f) reads them: BOS and the end-of-generation set
// it prints (Gemma 3: <eos>, <end_of_turn>, its eos here, and </s> by its text), Gemma 3 with
// no space prefix.
TEST(FixtureVocabSpecials, BosAndEndOfGenerationAsLlamaCpp) {
  const std::filesystem::path dir = SWITCHYARD_VOCAB_2026_DIR;
  auto load_fixture = [&](const std::string& name) {
    const auto f = gguf::File::open((dir / ("ggml-vocab-" + name + ".gguf")).string());
    return Tokenizer::from_gguf(*f);
  };
  const auto gemma = load_fixture("gemma-3");
  EXPECT_FALSE(gemma->vocab().add_space_prefix);
  EXPECT_EQ(gemma->n_vocab(), 262208);
  EXPECT_EQ(gemma->end_of_generation(), (Ids{1, 106, 212}));
  EXPECT_EQ(gemma->encode("Hello world", gemma->vocab().add_bos), (Ids{2, 9259, 1902}));
  // Gemma 4's model: BOS always, no space prefix, the same end-of-generation set; byte fallback
  // for characters with no piece (U+10FFFD, U+2F800), as llama-tokenize gives.
  const auto gemma4 = load_fixture("gemma-4");
  EXPECT_EQ(gemma4->n_vocab(), 262145);
  EXPECT_TRUE(gemma4->vocab().add_bos);
  EXPECT_EQ(gemma4->end_of_generation(), (Ids{1, 106, 212}));
  EXPECT_EQ(gemma4->encode("Hello world", gemma4->vocab().add_bos), (Ids{2, 9259, 1902}));
  const std::string odd = "\xF4\x8F\xBF\xBD\xF0\xAF\xA0\x80 x";
  EXPECT_EQ(gemma4->encode(odd, false), (Ids{482, 381, 429, 427, 478, 413, 398, 366, 1123}));
  EXPECT_EQ(gemma4->decode(gemma4->encode(odd, true)), odd);
  const auto gpt = load_fixture("gpt-4o");
  EXPECT_EQ(gpt->end_of_generation(), (Ids{199999}));
  EXPECT_EQ(gpt->encode("Hello world", gpt->vocab().add_bos), (Ids{13225, 2375}));
  const auto deepseek = load_fixture("deepseek-v3");
  EXPECT_EQ(deepseek->end_of_generation(), (Ids{1}));
  EXPECT_EQ(deepseek->encode("Hello world", deepseek->vocab().add_bos), (Ids{0, 19923, 2058}));
}

// Qwen 3.5's pre-tokenizer (tokenizer.ggml.pre "qwen35": Qwen 2's regex with combining marks kept
// in words) on Qwen 2's vocabulary, against llama.cpp's llama-tokenize (0253fb21f) on the same
// file. The strings are NFC-stable (marks after a space, an apostrophe or a newline; Devanagari),
// so Hugging Face's NFC normaliser would leave them as they are.
TEST(ReferenceVocabSpecials, Qwen35PreTokenizerAsLlamaCpp) {
  if (!have_reference()) GTEST_SKIP() << "no reference data";
  const auto src =
      gguf::File::open((test::vocab_reference_dir() / "ggml-vocab-qwen2.gguf").string());
  gguf::Writer w = test::copy_gguf(*src);
  w.set("tokenizer.ggml.pre", gguf::Value::of_str("qwen35"));
  const auto bytes = w.to_bytes();
  const auto f = gguf::File::parse(bytes.data(), bytes.size(), "qwen35.gguf");
  const auto tok = Tokenizer::from_gguf(*f);
  const std::string mark = "\xcc\x81";  // U+0301 COMBINING ACUTE ACCENT
  const std::vector<std::pair<std::string, Ids>> cases = {
      {" " + mark + "abc", {220, 53839, 13683}},
      {"Hello world", {9707, 1879}},
      {"\xe0\xa4\x95\xe0\xa4\xbf\xe0\xa4\xa4\xe0\xa4\xbe\xe0\xa4\xac",
       {64704, 42311, 97, 31411, 105}},
      {"'s " + mark + "'ll", {594, 220, 53839, 3278}},
      {"x\n" + mark + "y", {87, 198, 53839, 88}},
      {mark + mark + " " + mark, {53839, 53839, 220, 53839}},
  };
  for (const auto& [text, want] : cases) EXPECT_EQ(tok->encode(text, false), want) << text;
  // Where the two regexes split differently: Qwen 2 keeps "'ll" apart from the mark before it.
  EXPECT_EQ(load("qwen2")->encode("'s " + mark + "'ll", false), (Ids{594, 220, 53839, 6, 654}));
}

// tokenizer.ggml.add_eos_token: read from the file (false when absent, as llama.cpp's SPM and BPE
// defaults are), and with special tokens added the EOS goes after the text, the BOS before it.
TEST(ReferenceVocabSpecials, AddEosTokenAppendsEosWithTheSpecials) {
  if (!have_reference()) GTEST_SKIP() << "no reference data";
  const auto plain = load("llama-spm");
  EXPECT_FALSE(plain->vocab().add_eos);
  const auto src =
      gguf::File::open((test::vocab_reference_dir() / "ggml-vocab-llama-spm.gguf").string());
  gguf::Writer w = test::copy_gguf(*src);
  w.set("tokenizer.ggml.add_eos_token", gguf::Value::of_bool(true));
  const auto bytes = w.to_bytes();
  const auto f = gguf::File::parse(bytes.data(), bytes.size(), "eos.gguf");
  const auto tok = Tokenizer::from_gguf(*f);
  ASSERT_TRUE(tok->vocab().add_eos);
  Ids want = {tok->vocab().bos};
  for (int32_t id : tok->encode("Hello world", false)) want.push_back(id);
  want.push_back(tok->vocab().eos);
  EXPECT_EQ(tokenize(*tok, "Hello world", {true, false, tok->vocab().add_eos}), want);
  EXPECT_EQ(want.back(), 2);  // </s>
}

constexpr int32_t kPhi3User = 32010, kPhi3End = 32007, kPhi3EndOfText = 32000;

TEST(ReferenceVocabSpecials, ControlTokensOnlyWhenAsked) {
  if (!have_reference()) GTEST_SKIP() << "no reference data";
  const auto tok = load("phi-3");
  ASSERT_EQ(tok->vocab().tokens[kPhi3User], "<|user|>");
  ASSERT_EQ(tok->vocab().tokens[kPhi3End], "<|end|>");
  const std::string text = "<|user|>\nHi<|end|>";
  // As user text: no control token is matched, the markers are spelled out and decode back.
  const Ids plain = tok->encode(text, false);
  for (int32_t id : plain) EXPECT_LT(id, 32000) << "control token parsed in user text";
  EXPECT_EQ(tok->decode(plain), text);
  // Parsed: the markers are their ids; llama.cpp's phi-3 rstrip drops the "\n" after <|user|>,
  // and the text after a special token gets SentencePiece's space prefix, as at the start.
  Ids want = {kPhi3User};
  for (int32_t id : tok->encode("Hi", false)) want.push_back(id);
  want.push_back(kPhi3End);
  EXPECT_EQ(tok->encode(text, false, true), want);
}

TEST(ReferenceVocabSpecials, RenderedTemplateMarkupIsParsedMessagesAreNot) {
  if (!have_reference()) GTEST_SKIP() << "no reference data";
  const auto f = gguf::File::open((test::vocab_reference_dir() / "ggml-vocab-phi-3.gguf").string());
  const auto tok = Tokenizer::from_gguf(*f);
  const ChatTemplate ct =
      ChatTemplate::resolve("", f->get_string("tokenizer.chat_template"));  // the file's own
  ASSERT_TRUE(ct.ok()) << ct.error();
  EXPECT_TRUE(ct.is_jinja());  // run as Jinja: the markup is what the template wrote itself
  const RenderedChat r = ct.render(
      {{"user", "say <|end|> then <|assistant|>"}, {"assistant", "ok"}, {"user", "again"}}, true);
  const Ids ids = tok->encode(r.text, true, r.markup);
  auto count = [&](int32_t id) { return std::count(ids.begin(), ids.end(), id); };
  EXPECT_EQ(ids.front(), tok->vocab().bos);
  EXPECT_EQ(count(kPhi3User), 2);  // the two user turns
  EXPECT_EQ(count(kPhi3End), 3);   // one per message; the one the user wrote is text
  EXPECT_EQ(count(32001), 2);      // <|assistant|>: one turn and the generation prompt
  // Parsing everything instead lets the user's markers through: that is what is prevented.
  const Ids all = tok->encode(r.text, true, true);
  EXPECT_EQ(std::count(all.begin(), all.end(), kPhi3End), 4);
}

TEST(ReferenceVocabSpecials, EndOfGenerationSet) {
  if (!have_reference()) GTEST_SKIP() << "no reference data";
  // The sets llama.cpp (0253fb21f) prints for these files ("printing all EOG tokens"): the keys'
  // eos and eot, and the tokens it knows by their text (phi-3's <|end|> is its eot; </s>,
  // Qwen's FIM pad, repo and file-separator markers).
  const auto phi3 = load("phi-3");
  EXPECT_EQ(phi3->end_of_generation(), (Ids{2, kPhi3EndOfText, kPhi3End}));
  EXPECT_EQ(phi3->vocab().eot, kPhi3End);
  EXPECT_EQ(load("llama-spm")->end_of_generation(), (Ids{2}));
  EXPECT_EQ(load("gpt-2")->end_of_generation(), (Ids{50256}));
  EXPECT_EQ(load("llama-bpe")->end_of_generation(), (Ids{128001, 128009}));
  EXPECT_EQ(load("qwen2")->end_of_generation(),
            (Ids{128247, 151643, 151645, 151662, 151663, 151664}));
  EXPECT_EQ(load("deepseek-llm")->end_of_generation(), (Ids{100001}));
}

}  // namespace
}  // namespace sy::text
