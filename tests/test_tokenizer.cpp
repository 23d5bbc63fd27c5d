// Tokenizers: the byte-level vocab mkmodel writes, crafted SentencePiece, GPT-2 and Gemma 4 vocabs
// with hand-computed segmentations, streaming decode, and Tokenizer::from_gguf with its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "switchyard/common/error.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"
#include "text/tokenizer_impl.h"

namespace sy::text {
namespace {

using Ids = std::vector<int32_t>;
const std::string kMark = "\xE2\x96\x81";  // "▁"

// Byte token id in byte_level_vocab.
int32_t B(unsigned char c) {
  return 3 + c;
}

// ---------------------------------------------------------------------------------------------
// byte_level_vocab

TEST(ByteLevelVocab, Layout) {
  const Vocab v = byte_level_vocab(300);
  ASSERT_EQ(v.tokens.size(), 300u);
  ASSERT_EQ(v.types.size(), 300u);
  ASSERT_EQ(v.scores.size(), 300u);
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.types[0], TokenType::UNKNOWN);
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.types[1], TokenType::CONTROL);
  EXPECT_EQ(v.tokens[2], "</s>");
  EXPECT_EQ(v.types[2], TokenType::CONTROL);
  EXPECT_EQ(v.tokens[3], "<0x00>");
  EXPECT_EQ(v.tokens[3 + 0x61], "<0x61>");
  EXPECT_EQ(v.tokens[3 + 0xAB], "<0xAB>");
  EXPECT_EQ(v.tokens[258], "<0xFF>");
  for (int i = 3; i < 259; ++i) EXPECT_EQ(v.types[i], TokenType::BYTE) << i;
  EXPECT_EQ(v.tokens[259], "[PAD259]");
  EXPECT_EQ(v.tokens[299], "[PAD299]");
  EXPECT_EQ(v.types[299], TokenType::UNUSED);
  for (float s : v.scores) EXPECT_EQ(s, 0.0f);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(byte_level_vocab(259).tokens.size(), 259u);
  EXPECT_THROW(byte_level_vocab(258), sy::Error);
}

class ByteLevel : public ::testing::Test {
 protected:
  std::unique_ptr<Tokenizer> tok = Tokenizer::create(byte_level_vocab(320));
};

TEST_F(ByteLevel, ExactIds) {
  // " a b" escaped is "▁a▁b"; nothing merges, so every character falls back to its bytes.
  const Ids mark = {B(0xE2), B(0x96), B(0x81)};
  Ids want = {1};
  want.insert(want.end(), mark.begin(), mark.end());
  want.push_back(B('a'));
  want.insert(want.end(), mark.begin(), mark.end());
  want.push_back(B('b'));
  EXPECT_EQ(tok->encode("a b", true), want);
  want.erase(want.begin());
  EXPECT_EQ(tok->encode("a b", false), want);
  EXPECT_EQ(B('a'), 100);
  // A 2-byte character becomes its two bytes.
  EXPECT_EQ(tok->encode("\xC3\xA9", false), (Ids{B(0xE2), B(0x96), B(0x81), B(0xC3), B(0xA9)}));
}

TEST_F(ByteLevel, EmptyText) {
  EXPECT_EQ(tok->encode("", false), Ids{});
  EXPECT_EQ(tok->encode("", true), Ids{1});  // no space prefix for empty text
  EXPECT_EQ(tok->decode({}), "");
  EXPECT_EQ(tok->decode({1}), "");
}

TEST_F(ByteLevel, RoundTrip) {
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes += char(c);  // also invalid UTF-8
  const std::vector<std::string> texts = {
      "Hello, world!",
      "a",
      " ",
      "   ",
      " leading and trailing ",
      "runs   of\t\tspaces\n\n\nand\r\nnewlines  ",
      "caf\xC3\xA9 na\xC3\xAFve \xE2\x9C\x93 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x8E\x89",
      "<s> and </s> are plain text here",
      all_bytes,
  };
  for (const auto& s : texts) {
    EXPECT_EQ(tok->decode(tok->encode(s, true)), s) << s;
    EXPECT_EQ(tok->decode(tok->encode(s, false)), s) << s;
  }
}

TEST_F(ByteLevel, Pieces) {
  EXPECT_EQ(tok->piece(B('a')), "a");
  EXPECT_EQ(tok->piece(B(0xE2)), "\xE2");
  EXPECT_EQ(tok->piece(0), "");    // unknown
  EXPECT_EQ(tok->piece(1), "");    // control
  EXPECT_EQ(tok->piece(2), "");    // control
  EXPECT_EQ(tok->piece(300), "");  // unused
  EXPECT_THROW(tok->piece(320), sy::Error);
  EXPECT_THROW(tok->piece(-1), sy::Error);
}

TEST_F(ByteLevel, DecodeDropsControlTokens) {
  // <s> x </s> </s> <unk> y
  EXPECT_EQ(tok->decode({1, B('x'), 2, 2, 0, B('y')}), "xy");
}

TEST_F(ByteLevel, StreamingHoldsPartialCharacters) {
  // "é ok" one token at a time: the two halves of é and the three bytes of ▁ are held back.
  const Ids ids = tok->encode("\xC3\xA9 ok", true);
  Detokenizer d(*tok, true);
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(d.push(id));
  out.push_back(d.finish());
  // <s>, ▁(3 bytes): nothing yet; C3: held; A9: "é"; ▁: held until complete; o; k.
  const std::vector<std::string> want = {"", "", "", "", "", "\xC3\xA9", "", "", " ", "o", "k", ""};
  EXPECT_EQ(out, want);
}

TEST_F(ByteLevel, StreamingContinuationKeepsSpace) {
  Detokenizer d(*tok, false);  // generated text after a prompt keeps its leading space
  std::string s;
  for (int32_t id : tok->encode("hi", false)) s += d.push(id);
  s += d.finish();
  EXPECT_EQ(s, " hi");
  // A truncated character is flushed as is by finish().
  Detokenizer e(*tok, false);
  EXPECT_EQ(e.push(B(0xE2)), "");
  EXPECT_EQ(e.push(B(0x96)), "");
  EXPECT_EQ(e.finish(), "\xE2\x96");
}

TEST_F(ByteLevel, BosRequiresBosToken) {
  Vocab v = byte_level_vocab(259);
  v.bos = -1;
  auto t = Tokenizer::create(v);
  EXPECT_THROW(t->encode("x", true), std::runtime_error);
  EXPECT_EQ(t->encode("x", false), (Ids{B(0xE2), B(0x96), B(0x81), B('x')}));
}

// ---------------------------------------------------------------------------------------------
// SentencePiece with merges

Vocab spm_vocab() {
  Vocab v;
  v.model = "llama";
  auto add = [&](std::string t, float score, TokenType type = TokenType::NORMAL) {
    v.tokens.push_back(std::move(t));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, TokenType::UNKNOWN);        // 0
  add("<s>", 0, TokenType::CONTROL);          // 1
  add("</s>", 0, TokenType::CONTROL);         // 2
  add(kMark, -1);                             // 3
  add("a", -2);                               // 4
  add("b", -2);                               // 5
  add("c", -2);                               // 6
  add("ab", -5);                              // 7
  add("bc", -1.5f);                           // 8
  add(kMark + "a", -3);                       // 9
  add("aa", -0.5f);                           // 10
  add("<0xC3>", 0, TokenType::BYTE);          // 11
  add("<0xA9>", 0, TokenType::BYTE);          // 12
  add("<user>", 0, TokenType::USER_DEFINED);  // 13
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  return v;
}

TEST(Spm, HighestScoreMergesFirst) {
  auto tok = Tokenizer::create(spm_vocab());
  // ▁ a b c: bc (-1.5) beats ▁a (-3) beats ab (-5); after bc, "ab" is stale -> [▁a, bc].
  // Left-to-right longest match would have given ▁a, b, c or ▁, ab, c.
  EXPECT_EQ(tok->encode("abc", true), (Ids{1, 9, 8}));
  EXPECT_EQ(tok->encode("abc", false), (Ids{9, 8}));
  EXPECT_EQ(tok->decode({1, 9, 8}), "abc");
}

TEST(Spm, TiesGoLeftmost) {
  auto tok = Tokenizer::create(spm_vocab());
  // ▁ a a a: the two "aa" pairs tie at -0.5; the left one merges, leaving ▁ aa a (a rightmost
  // merge would have given ▁a aa).
  EXPECT_EQ(tok->encode("aaa", false), (Ids{3, 10, 4}));
}

TEST(Spm, ByteFallbackAndUnknown) {
  auto tok = Tokenizer::create(spm_vocab());
  // é has byte tokens; z has neither a token nor <0x7A>, so it becomes <unk>.
  EXPECT_EQ(tok->encode("\xC3\xA9 z", false), (Ids{3, 11, 12, 3, 0}));
  EXPECT_EQ(tok->decode({3, 11, 12}), "\xC3\xA9");
  EXPECT_EQ(tok->decode({3, 11, 12, 3, 0}), "\xC3\xA9 ");  // <unk> prints nothing
  Vocab v = spm_vocab();
  v.unk = -1;
  EXPECT_THROW(Tokenizer::create(v)->encode("z", false), std::runtime_error);
}

TEST(Spm, NoSpacePrefix) {
  Vocab v = spm_vocab();
  v.add_space_prefix = false;
  auto tok = Tokenizer::create(v);
  // a b c: bc (-1.5) beats ab (-5) -> [a, bc]; decode keeps the text as is.
  EXPECT_EQ(tok->encode("abc", false), (Ids{4, 8}));
  EXPECT_EQ(tok->decode({3, 4}), " a");
}

TEST(Spm, UserDefinedTokensMatchLiterally) {
  auto tok = Tokenizer::create(spm_vocab());
  // "a" | <user> | "b": each text fragment after a special gets its own space prefix, as in
  // llama.cpp, so the decode shows a space after the user token.
  const Ids ids = tok->encode("a<user>b", false);
  EXPECT_EQ(ids, (Ids{9, 13, 3, 5}));
  EXPECT_EQ(tok->decode(ids), "a<user> b");
  EXPECT_EQ(tok->piece(13), "<user>");
}

TEST(Spm, Pieces) {
  auto tok = Tokenizer::create(spm_vocab());
  EXPECT_EQ(tok->piece(3), " ");
  EXPECT_EQ(tok->piece(9), " a");
  EXPECT_EQ(tok->piece(11), "\xC3");
  EXPECT_EQ(tok->piece(1), "");
  EXPECT_EQ(tok->piece(0), "");
  // Control tokens vanish from decode; the prefix space is dropped once.
  EXPECT_EQ(tok->decode({1, 9, 2, 3, 4, 2}), "a a");
}

TEST(Spm, CreateValidates) {
  Vocab v = spm_vocab();
  v.scores.pop_back();
  EXPECT_THROW(Tokenizer::create(v), std::runtime_error);
  v = spm_vocab();
  v.eos = 99;
  EXPECT_THROW(Tokenizer::create(v), std::runtime_error);
  v = spm_vocab();
  v.model = "bert";
  EXPECT_THROW(Tokenizer::create(v), std::runtime_error);
  v = spm_vocab();
  v.tokens.clear();
  v.scores.clear();
  v.types.clear();
  EXPECT_THROW(Tokenizer::create(v), std::runtime_error);
  // Scores and types may be absent altogether.
  v = spm_vocab();
  v.scores.clear();
  v.types.clear();
  EXPECT_NO_THROW(Tokenizer::create(v));
}

// ---------------------------------------------------------------------------------------------
// GPT-2 byte-level BPE

const std::string kG = "\xC4\xA0";  // "Ġ", GPT-2's stand-in for the space byte

Vocab gpt2_vocab() {
  Vocab v;
  v.model = "gpt2";
  v.tokens = {"<|endoftext|>", "h",  "e",  "l",  "o",   "w",  "r",        "d", kG,
              kG + "w",        "lo", "he", "ll", "llo", "or", kG + "wor", "!", "<|user|>"};
  v.types.assign(v.tokens.size(), TokenType::NORMAL);
  v.types[0] = TokenType::CONTROL;
  v.types[17] = TokenType::USER_DEFINED;
  v.merges = {kG + " w", "l o", "h e", "l l", "l lo", "o r", kG + "w or"};
  v.bos = v.eos = 0;
  v.add_bos = false;
  return v;
}

TEST(Gpt2, PreTokenizer) {
  using W = std::vector<std::string>;
  const detail::PreTokenizer& gpt2 = detail::require_pre_tokenizer("gpt-2");
  EXPECT_EQ(detail::pretokenize(gpt2, "I'm  here's 123 abc\n\nx  "),
            (W{"I", "'m", " ", " here", "'s", " 123", " abc", "\n", "\n", "x", "  "}));
  EXPECT_EQ(detail::pretokenize(gpt2, "a,.b !!'x 'll 're'd"),
            (W{"a", ",.", "b", " !!'", "x", " '", "ll", " '", "re", "'d"}));
  // \p{L}: é (Ll) and 日本 (Lo) are letters, so the words stay whole.
  EXPECT_EQ(detail::pretokenize(gpt2, "h\xC3\xA9llo \xE6\x97\xA5\xE6\x9C\xAC 42x"),
            (W{"h\xC3\xA9llo", " \xE6\x97\xA5\xE6\x9C\xAC", " 42", "x"}));
  EXPECT_EQ(detail::pretokenize(gpt2, ""), W{});
  EXPECT_EQ(detail::pretokenize(gpt2, " "), W{" "});
  EXPECT_EQ(detail::pretokenize(gpt2, "'"), W{"'"});
}

TEST(Gpt2, MergesByRank) {
  auto tok = Tokenizer::create(gpt2_vocab());
  // "hello": lo(1) first, then he(2); ll(3) is stale; l+lo(4) -> [he, llo].
  // " world" = Ġ w o r l d: Ġw(0), or(5), Ġw+or(6) -> [Ġwor, l, d]. "!" alone.
  const Ids want = {11, 13, 15, 3, 7, 16};
  EXPECT_EQ(tok->encode("hello world!", false), want);
  Ids with_bos = {0};
  with_bos.insert(with_bos.end(), want.begin(), want.end());
  EXPECT_EQ(tok->encode("hello world!", true), with_bos);
  EXPECT_EQ(tok->decode(with_bos), "hello world!");  // no space prefix to strip in gpt2
  EXPECT_EQ(tok->piece(15), " wor");
  EXPECT_EQ(tok->piece(0), "");
  EXPECT_EQ(tok->encode("", false), Ids{});
}

TEST(Gpt2, UserDefinedAndMissingCharacters) {
  auto tok = Tokenizer::create(gpt2_vocab());
  EXPECT_EQ(tok->encode("he<|user|>lo", false), (Ids{11, 17, 10}));
  EXPECT_EQ(tok->decode({11, 17, 10}), "he<|user|>lo");
  // 'z' has no token and there is no unk: dropped, as llama.cpp does.
  EXPECT_EQ(tok->encode("hz", false), (Ids{1}));
  Vocab v = gpt2_vocab();
  v.unk = 6;
  EXPECT_EQ(Tokenizer::create(v)->encode("hz", false), (Ids{1, 6}));
}

// GPT-2's bytes_to_unicode, written out independently of the implementation: token b is byte b.
std::vector<std::string> byte_alphabet() {
  std::vector<std::string> tokens;
  uint32_t extra = 0;
  for (int c = 0; c < 256; ++c) {
    const bool keep = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
    const uint32_t cp = keep ? c : 256 + extra++;
    std::string s;
    if (cp < 0x80) {
      s += char(cp);
    } else {
      s += char(0xC0 | (cp >> 6));
      s += char(0x80 | (cp & 0x3F));
    }
    tokens.push_back(s);
  }
  return tokens;
}

TEST(Gpt2, ByteLevelRoundTrip) {
  // The 256-character byte alphabet and no useful merges round-trips text.
  Vocab v;
  v.model = "gpt2";
  std::string raw;
  for (int c = 0; c < 256; ++c) raw += char(c);
  v.tokens = byte_alphabet();
  v.merges = {"a b"};
  auto tok = Tokenizer::create(v);
  EXPECT_EQ(v.tokens[' '], kG);
  EXPECT_EQ(v.tokens['\n'], "\xC4\x8A");  // "Ċ"
  EXPECT_EQ(v.tokens[0], "\xC4\x80");     // "Ā"
  // Every ASCII byte, and the bytes of valid UTF-8, come out as themselves.
  const Ids ids = tok->encode(raw.substr(0, 128), false);
  ASSERT_EQ(ids.size(), 128u);
  for (int c = 0; c < 128; ++c) EXPECT_EQ(ids[c], c);
  EXPECT_EQ(tok->decode(ids), raw.substr(0, 128));
  EXPECT_EQ(tok->encode("\xC3\xA9\xF0\x9F\xA6\x99", false),
            (Ids{0xC3, 0xA9, 0xF0, 0x9F, 0xA6, 0x99}));
  // A byte that is not UTF-8 becomes U+FFFD (EF BF BD) before splitting, as in llama.cpp.
  EXPECT_EQ(tok->encode("a\xFF", false), (Ids{'a', 0xEF, 0xBF, 0xBD}));
  const std::string text = "  Hello,\tw\xC3\xB6rld!\n\n 123  ";
  EXPECT_EQ(tok->decode(tok->encode(text, false)), text);
}

TEST(Gpt2, CreateValidates) {
  Vocab v = gpt2_vocab();
  v.merges.clear();
  EXPECT_THROW(Tokenizer::create(v), std::runtime_error);
  v = gpt2_vocab();
  v.merges.push_back("nospace");
  EXPECT_THROW(Tokenizer::create(v), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// from_gguf

using gguf::Value;

void put_vocab(gguf::Writer& w, const Vocab& v) {
  std::vector<int32_t> types;
  for (auto t : v.types) types.push_back(static_cast<int32_t>(t));
  w.set("tokenizer.ggml.model", Value::of_str(v.model));
  w.set("tokenizer.ggml.tokens", Value::of_str_array(v.tokens));
  if (!v.scores.empty()) w.set("tokenizer.ggml.scores", Value::of_f32_array(v.scores));
  w.set("tokenizer.ggml.token_type", Value::of_i32_array(types));
  if (!v.merges.empty()) w.set("tokenizer.ggml.merges", Value::of_str_array(v.merges));
  if (v.bos >= 0) w.set("tokenizer.ggml.bos_token_id", Value::of_u32(v.bos));
  if (v.eos >= 0) w.set("tokenizer.ggml.eos_token_id", Value::of_u32(v.eos));
  if (v.unk >= 0) w.set("tokenizer.ggml.unknown_token_id", Value::of_u32(v.unk));
}

struct Parsed {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::File> file;
};

Parsed parse(const gguf::Writer& w) {
  Parsed p;
  p.bytes = w.to_bytes();
  p.file = gguf::File::parse(p.bytes.data(), p.bytes.size(), "vocab.gguf");
  return p;
}

std::string error_of(const gguf::Writer& w) {
  const Parsed p = parse(w);
  try {
    Tokenizer::from_gguf(*p.file);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

// Tokenizer::create's error for v, as error_of gives from_gguf's.
std::string create_error(const Vocab& v) {
  try {
    Tokenizer::create(v);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

gguf::Writer byte_level_writer() {
  gguf::Writer w;
  w.set("general.architecture", Value::of_str("llama"));
  put_vocab(w, byte_level_vocab(300));
  w.set("tokenizer.ggml.add_bos_token", Value::of_bool(true));
  return w;
}

TEST(FromGguf, ByteLevel) {
  const Parsed p = parse(byte_level_writer());
  auto tok = Tokenizer::from_gguf(*p.file);
  EXPECT_EQ(tok->n_vocab(), 300);
  EXPECT_EQ(tok->vocab().model, "llama");
  EXPECT_EQ(tok->vocab().bos, 1);
  EXPECT_EQ(tok->vocab().eos, 2);
  EXPECT_EQ(tok->vocab().unk, 0);
  EXPECT_EQ(tok->vocab().pad, -1);
  EXPECT_TRUE(tok->vocab().add_bos);
  EXPECT_TRUE(tok->vocab().add_space_prefix);
  EXPECT_EQ(tok->vocab().types, byte_level_vocab(300).types);
  auto ref = Tokenizer::create(byte_level_vocab(300));
  const std::string s = "GGUF says h\xC3\xA9llo";
  EXPECT_EQ(tok->encode(s, true), ref->encode(s, true));
  EXPECT_EQ(tok->decode(tok->encode(s, true)), s);
}

TEST(FromGguf, DefaultsAndFlags) {
  // llama without special ids or flags: llama.cpp's defaults (bos 1, eos 2, unk 0, add_bos).
  gguf::Writer w;
  w.set("tokenizer.ggml.model", Value::of_str("llama"));
  w.set("tokenizer.ggml.tokens", Value::of_str_array(byte_level_vocab(259).tokens));
  {
    const Parsed p = parse(w);
    auto tok = Tokenizer::from_gguf(*p.file);
    EXPECT_EQ(tok->vocab().bos, 1);
    EXPECT_EQ(tok->vocab().eos, 2);
    EXPECT_EQ(tok->vocab().unk, 0);
    EXPECT_TRUE(tok->vocab().add_bos);
    EXPECT_TRUE(tok->vocab().add_space_prefix);
    EXPECT_TRUE(tok->vocab().scores.empty());
    // No types in the file: all NORMAL, but </s>, which llama.cpp makes CONTROL by its text.
    ASSERT_EQ(tok->vocab().types.size(), 259u);
    EXPECT_EQ(tok->vocab().types[2], TokenType::CONTROL);
    EXPECT_EQ(std::count(tok->vocab().types.begin(), tok->vocab().types.end(), TokenType::NORMAL),
              258);
  }
  w.set("tokenizer.ggml.add_bos_token", Value::of_bool(false));
  w.set("tokenizer.ggml.add_space_prefix", Value::of_bool(false));
  w.set("tokenizer.ggml.padding_token_id", Value::of_u32(5));
  {
    const Parsed p = parse(w);
    auto tok = Tokenizer::from_gguf(*p.file);
    EXPECT_FALSE(tok->vocab().add_bos);
    EXPECT_FALSE(tok->vocab().add_space_prefix);
    EXPECT_EQ(tok->vocab().pad, 5);
  }
}

TEST(FromGguf, Gpt2) {
  gguf::Writer w;
  Vocab v = gpt2_vocab();
  put_vocab(w, v);
  const Parsed p = parse(w);
  auto tok = Tokenizer::from_gguf(*p.file);
  EXPECT_EQ(tok->vocab().model, "gpt2");
  EXPECT_EQ(tok->vocab().merges, v.merges);
  EXPECT_FALSE(tok->vocab().add_bos);  // gpt2 default
  EXPECT_EQ(tok->vocab().unk, -1);
  EXPECT_EQ(tok->encode("hello world!", false), (Ids{11, 13, 15, 3, 7, 16}));
}

TEST(FromGguf, Errors) {
  {
    gguf::Writer bare;
    bare.set("general.architecture", Value::of_str("llama"));
    EXPECT_EQ(error_of(bare), "tokenizer.ggml.model is missing");
  }
  for (const char* m : {"no_vocab", "none"}) {
    gguf::Writer w;
    w.set("tokenizer.ggml.model", Value::of_str(m));
    EXPECT_EQ(error_of(w),
              std::string("tokenizer.ggml.model is '") + m + "': the file has no text vocabulary");
  }
  {
    gguf::Writer w = byte_level_writer();
    w.set("tokenizer.ggml.model", Value::of_str("bert"));
    EXPECT_EQ(
        error_of(w),
        "tokenizer.ggml.model 'bert' is not supported (expected 'llama', 'gpt2' or 'gemma4')");
  }
  {
    gguf::Writer w;
    w.set("tokenizer.ggml.model", Value::of_str("llama"));
    EXPECT_EQ(error_of(w), "tokenizer.ggml.tokens is missing");
    w.set("tokenizer.ggml.tokens", Value::of_i32_array({1, 2}));
    EXPECT_EQ(error_of(w),
              "tokenizer.ggml.tokens must be an array of strings (found ARRAY of INT32)");
    w.set("tokenizer.ggml.tokens", Value::of_str("x"));
    EXPECT_EQ(error_of(w), "tokenizer.ggml.tokens must be an array of strings (found STRING)");
  }
  {
    gguf::Writer w = byte_level_writer();
    w.set("tokenizer.ggml.scores", Value::of_f32_array({0, 0}));
    EXPECT_EQ(error_of(w), "tokenizer.ggml.scores has 2 entries for 300 tokens");
  }
  {
    gguf::Writer w = byte_level_writer();
    w.set("tokenizer.ggml.token_type", Value::of_i32_array({1, 1}));
    EXPECT_EQ(error_of(w), "tokenizer.ggml.token_type has 2 entries for 300 tokens");
  }
  {
    gguf::Writer w = byte_level_writer();
    std::vector<int32_t> types(300, 1);
    types[7] = 9;
    w.set("tokenizer.ggml.token_type", Value::of_i32_array(types));
    EXPECT_EQ(error_of(w), "tokenizer.ggml.token_type[7] is 9 (expected 1..6)");
  }
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id",
                          "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    gguf::Writer w = byte_level_writer();
    w.set(key, Value::of_u32(300));
    EXPECT_EQ(error_of(w), std::string(key) + " is 300 but the vocabulary has 300 tokens");
    w.set(key, Value::of_i32(-1));
    EXPECT_EQ(error_of(w), std::string(key) + " is -1 but the vocabulary has 300 tokens");
  }
  {
    gguf::Writer w;
    Vocab v = gpt2_vocab();
    v.merges.clear();
    put_vocab(w, v);
    EXPECT_EQ(error_of(w), "tokenizer.ggml.merges is missing (required for model 'gpt2')");
    w.set("tokenizer.ggml.merges", Value::of_str_array({"h e", "he"}));
    EXPECT_EQ(error_of(w), "tokenizer.ggml.merges[1] 'he' is not of the form 'a b'");
  }
}

TEST(FromGguf, PreTokenizer) {
  // An unknown tokenizer.ggml.pre is refused by name, from a file and from a Vocab alike.
  gguf::Writer w;
  put_vocab(w, gpt2_vocab());
  w.set("tokenizer.ggml.pre", Value::of_str("qwen9"));
  EXPECT_EQ(error_of(w), "tokenizer.ggml.pre: unknown pre-tokenizer type: 'qwen9'");
  Vocab v = gpt2_vocab();
  v.pre = "qwen9";
  EXPECT_EQ(create_error(v), "tokenizer.ggml.pre: unknown pre-tokenizer type: 'qwen9'");
  // SentencePiece vocabularies have no pre-tokenizer: llama.cpp ignores the key there.
  gguf::Writer spm = byte_level_writer();
  spm.set("tokenizer.ggml.pre", Value::of_str("qwen9"));
  EXPECT_NO_THROW(Tokenizer::from_gguf(*parse(spm).file));
  // Llama 3's pre-tokenizer adds BOS by default; GPT-2's does not.
  w.set("tokenizer.ggml.pre", Value::of_str("llama-bpe"));
  EXPECT_TRUE(Tokenizer::from_gguf(*parse(w).file)->vocab().add_bos);
  w.set("tokenizer.ggml.pre", Value::of_str("gpt-2"));
  EXPECT_FALSE(Tokenizer::from_gguf(*parse(w).file)->vocab().add_bos);
}

TEST(Gpt2, IgnoreMergesTakesWholeWords) {
  // "hello" is a token that no merge sequence builds: Llama 3's pre-tokenizer emits it whole
  // (llama.cpp's ignore_merges), GPT-2's merges it as far as the merges go.
  Vocab v = gpt2_vocab();
  v.tokens.push_back("hello");
  v.types.push_back(TokenType::NORMAL);
  v.merges = {"h e", "l o"};
  v.pre = "llama-bpe";
  EXPECT_EQ(Tokenizer::create(v)->encode("hello", false), (Ids{18}));
  v.pre = "gpt-2";
  EXPECT_EQ(Tokenizer::create(v)->encode("hello", false), (Ids{11, 3, 10}));
}

// ---------------------------------------------------------------------------------------------
// Gemma 4: BPE merges over SentencePiece-style text ("▁" for spaces, UTF-8 characters as
// symbols, "<0xXX>" byte fallback)

Vocab gemma4_vocab() {
  Vocab v;
  v.model = "gemma4";
  v.pre = "gemma4";
  v.tokens = {"<pad>",     "<eos>", "<bos>",       "<0xC3>", "<0xA9>", "h",    "e",      "l",
              "o",         kMark,   "w",           "r",      "d",      "he",   "ll",     "llo",
              kMark + "w", "or",    kMark + "wor", "hello",  "\n",     "\n\n", "<turn|>"};
  v.types.assign(v.tokens.size(), TokenType::NORMAL);
  v.types[0] = v.types[1] = v.types[2] = v.types[22] = TokenType::CONTROL;
  v.types[3] = v.types[4] = TokenType::BYTE;
  v.merges = {"h e", "l l", "ll o", "he llo", kMark + " w", "o r", kMark + "w or"};
  v.bos = 2;
  v.eos = 1;
  v.add_space_prefix = false;
  return v;
}

TEST(Gemma4, MergesRunOnEscapedSpacesByRank) {
  auto tok = Tokenizer::create(gemma4_vocab());
  // hello: he(0), ll(1), llo(2), hello(3). " world" = ▁ w o r l d: ▁w(4), or(5), ▁wor(6); "▁" is
  // one symbol of three bytes. No space prefix.
  EXPECT_EQ(tok->encode("hello world", false), (Ids{19, 18, 7, 12}));
  EXPECT_EQ(tok->encode(" hello", true), (Ids{2, 9, 19}));
  EXPECT_EQ(tok->decode({2, 9, 19}), " hello");  // nothing stripped
  EXPECT_EQ(tok->encode("  ", false), (Ids{9, 9}));
  EXPECT_EQ(tok->piece(18), " wor");
  EXPECT_EQ(tok->piece(9), " ");
}

TEST(Gemma4, NewlineRunsAndByteFallback) {
  auto tok = Tokenizer::create(gemma4_vocab());
  // The text splits at newline runs; a run that is a token is taken whole (llama.cpp's fix), a
  // longer one goes through the merges (none join newlines here).
  EXPECT_EQ(tok->encode("he\n\nhe", false), (Ids{13, 21, 13}));
  EXPECT_EQ(tok->encode("\n\n\n", false), (Ids{20, 20, 20}));
  // é has no token: its bytes' tokens. ü's second byte has none: dropped, as llama.cpp does.
  EXPECT_EQ(tok->encode("h\xC3\xA9", false), (Ids{5, 3, 4}));
  EXPECT_EQ(tok->encode("\xC3\xBC", false), (Ids{3}));
  EXPECT_EQ(tok->decode({5, 3, 4}), "h\xC3\xA9");
  EXPECT_EQ(tok->piece(3), "\xC3");
  // <turn|> is Gemma 4's end of turn: control, and ends generation with eos.
  EXPECT_EQ(tok->end_of_generation(), (Ids{1, 22}));
  EXPECT_EQ(tok->encode("<turn|>", false, true), (Ids{22}));
}

TEST(Gemma4, FromGguf) {
  gguf::Writer w;
  Vocab v = gemma4_vocab();
  put_vocab(w, v);
  // llama.cpp takes the pre-tokenizer from the model and adds BOS whatever the file says.
  w.set("tokenizer.ggml.pre", Value::of_str("qwen2"));
  w.set("tokenizer.ggml.add_bos_token", Value::of_bool(false));
  auto tok = Tokenizer::from_gguf(*parse(w).file);
  EXPECT_EQ(tok->vocab().pre, "gemma4");
  EXPECT_TRUE(tok->vocab().add_bos);
  EXPECT_FALSE(tok->vocab().add_space_prefix);
  EXPECT_EQ(tok->encode("hello world", true), (Ids{2, 19, 18, 7, 12}));
  gguf::Writer no_merges;
  Vocab nm = v;
  nm.merges.clear();
  put_vocab(no_merges, nm);
  EXPECT_EQ(error_of(no_merges), "tokenizer.ggml.merges is missing (required for model 'gemma4')");
  no_merges.set("tokenizer.ggml.merges", Value::of_str_array({}));
  EXPECT_EQ(error_of(no_merges), "tokenizer.ggml.merges is empty (required for model 'gemma4')");
  EXPECT_EQ(create_error(nm), "vocab: gemma4 needs merges");
  v.pre = "";
  EXPECT_EQ(create_error(v), "vocab: model 'gemma4' takes the 'gemma4' pre-tokenizer, not ''");
}

TEST(FromGguf, EndOfGenerationKeys) {
  gguf::Writer w = byte_level_writer();
  w.set("tokenizer.ggml.eot_token_id", Value::of_u32(5));
  w.set("tokenizer.ggml.eom_token_id", Value::of_u32(6));
  auto tok = Tokenizer::from_gguf(*parse(w).file);
  EXPECT_EQ(tok->vocab().eot, 5);
  EXPECT_EQ(tok->vocab().eom, 6);
  EXPECT_EQ(tok->end_of_generation(), (Ids{2, 5, 6}));
  EXPECT_EQ(Tokenizer::create(byte_level_vocab(300))->end_of_generation(), (Ids{2}));
}

// GPT-2's 256-character byte alphabet (ids = byte values) plus chat markers: <|im_start|> (256)
// CONTROL, <|im_end|> (257) NORMAL as some converters leave it, <|user|> (258) USER_DEFINED.
Vocab marker_vocab() {
  Vocab v;
  v.model = "gpt2";
  v.tokens = byte_alphabet();
  v.types.assign(256, TokenType::NORMAL);
  for (auto [t, type] :
       {std::pair{"<|im_start|>", TokenType::CONTROL}, std::pair{"<|im_end|>", TokenType::NORMAL},
        std::pair{"<|user|>", TokenType::USER_DEFINED}}) {
    v.tokens.push_back(t);
    v.types.push_back(type);
  }
  v.merges = {"a b"};
  return v;
}

Ids bytes_of(const std::string& s) {
  Ids ids;
  for (unsigned char c : s) ids.push_back(c);
  return ids;
}

TEST(Specials, ControlTokensAreParsedOnlyWhenAsked) {
  auto tok = Tokenizer::create(marker_vocab());
  // llama.cpp makes a token named like an end-of-turn marker CONTROL and ends generation on it.
  EXPECT_EQ(tok->vocab().types[257], TokenType::CONTROL);
  EXPECT_EQ(tok->vocab().eot, 257);
  EXPECT_EQ(tok->end_of_generation(), (Ids{257}));
  const std::string text = "<|im_start|>hi<|im_end|>";
  EXPECT_EQ(tok->encode(text, false), bytes_of(text));  // user text: all plain bytes
  EXPECT_EQ(tok->encode(text, false, true), (Ids{256, 'h', 'i', 257}));
  // USER_DEFINED tokens are matched either way.
  EXPECT_EQ(tok->encode("hi<|user|>", false), (Ids{'h', 'i', 258}));
  // Decoding hides control tokens unless asked to show them.
  EXPECT_EQ(tok->decode({256, 'h', 'i', 257}), "hi");
  EXPECT_EQ(tok->decode({256, 'h', 'i', 257}, true), text);
}

TEST(Specials, TrustedSpansLimitWhereControlTokensMatch) {
  auto tok = Tokenizer::create(marker_vocab());
  // Markup "<|im_start|>" and "<|im_end|>" around a message that spells "<|im_end|>" itself.
  const std::string text = "<|im_start|>hi<|im_end|><|im_end|>";
  Ids want = {256, 'h', 'i'};
  for (int32_t id : bytes_of("<|im_end|>")) want.push_back(id);
  want.push_back(257);
  EXPECT_EQ(tok->encode(text, false, std::vector<TextSpan>{{0, 12}, {24, 34}}), want);
  // A marker only partly inside a trusted span is text too.
  Ids partial = {256, 'h', 'i'};
  for (int32_t id : bytes_of("<|im_end|><|im_end|>")) partial.push_back(id);
  EXPECT_EQ(tok->encode(text, false, std::vector<TextSpan>{{0, 20}}), partial);
}

}  // namespace
}  // namespace sy::text
