// The pre-tokenizer regex (ECMAScript semantics, checked against std::wregex on patterns both
// take), the Unicode tables, and each pre-tokenizer family's splits of hand-worked texts.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <stdexcept>

#include "switchyard/common/error.h"
#include "text/pretokenizer.h"
#include "text/regex.h"
#include "text/unicode.h"

namespace sy::text::detail {
namespace {

using W = std::vector<std::string>;

size_t match(const char* pattern, const std::string& text, bool not_empty = false) {
  const auto cps = decode_utf8(text);
  return Regex(pattern).match_at(cps, 0, cps.size(), 0, not_empty);
}

constexpr size_t npos = Regex::npos;

TEST(Regex, AlternativesInOrderQuantifiersGreedy) {
  EXPECT_EQ(match("a|ab", "ab"), 1u);  // the first alternative that matches wins
  EXPECT_EQ(match("ab|a", "ab"), 2u);
  EXPECT_EQ(match("a+ab", "aaab"), 4u);  // backtracks into the repeat
  EXPECT_EQ(match("a+?", "aaa"), 1u);    // lazy
  EXPECT_EQ(match("(?:ab)+", "ababa"), 4u);
  EXPECT_EQ(match("(a|ab)(c|bcd)", "abcd"), 4u);  // backtracks into the first group
  EXPECT_EQ(match("\\p{N}{1,3}", "12345"), 3u);
  EXPECT_EQ(match("[0-9]{2,}", "1"), npos);
  EXPECT_EQ(match("x{2}", "xxx"), 2u);
  EXPECT_EQ(match("a{,2}", "a{,2}"), 5u);  // not a quantifier: literal braces
  EXPECT_EQ(match("b", "ab"), npos);       // anchored at the start position
  EXPECT_EQ(match("a*", "bbb"), 0u);
  EXPECT_EQ(match("a*", "bbb", true), npos);  // not_empty refuses the empty match
  EXPECT_EQ(match("(?:a?)*", ""), 0u);        // an empty iteration ends the loop
  EXPECT_EQ(match("(a*)*b", "aab"), 3u);
}

TEST(Regex, LookaheadsAnchorsAndClasses) {
  EXPECT_EQ(match("\\s+(?!\\S)", "   x"), 2u);  // leaves the last space to the word
  EXPECT_EQ(match("\\s+(?!\\S)", "   "), 3u);
  EXPECT_EQ(match("\\s+(?!\\S)", " x"), npos);
  EXPECT_EQ(match("a(?=b)", "ab"), 1u);
  EXPECT_EQ(match("\\s+$", "  "), 2u);
  EXPECT_EQ(match("\\s+$", "  x"), npos);
  EXPECT_EQ(match("^a", "a"), 1u);
  EXPECT_EQ(match("\\bab\\b", "ab"), 2u);
  EXPECT_EQ(match("[^\\s\\p{L}\\p{N}]+",
                  "!?\xC2\xBF"
                  "a"),
            3u);                                                 // ! ? ¿ then a letter
  EXPECT_EQ(match("\\p{L}+", "h\xC3\xA9llo\xE6\x97\xA5!"), 6u);  // é (Ll), 日 (Lo)
  EXPECT_EQ(match("\\p{Lu}+", "ABc"), 2u);
  EXPECT_EQ(match("\\P{L}+", "12a"), 2u);
  EXPECT_EQ(match("[\\p{P}\\$]+", "$,-a"), 3u);
  EXPECT_EQ(match("\\s", "\xE3\x80\x80"), 1u);  // U+3000 is White_Space
  EXPECT_EQ(match("[\\x{4E00}-\\x{9FA5}]+", "\xE4\xB8\x80\xE9\xBE\xA5x"), 2u);  // 一 龥
  EXPECT_EQ(match("[a\\-z]+", "a-z-b"), 4u);
  EXPECT_EQ(match(".+", "ab\ncd"), 2u);
  EXPECT_EQ(match("[^a-z]+",
                  "\xC3\x89"
                  "A1b"),
            3u);  // É A 1
}

TEST(Regex, SyntaxErrorsNameTheProblem) {
  auto error = [](const char* p) -> std::string {
    try {
      Regex r(p);
    } catch (const sy::Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(error("(ab"), "regex '(ab': missing ')' at offset 3");
  EXPECT_EQ(error("ab)"), "regex 'ab)': unbalanced ')' at offset 2");
  EXPECT_EQ(error("[a-"), "regex '[a-': missing ']' at offset 3");
  EXPECT_EQ(error("\\p{Han}"), "regex '\\p{Han}': unknown Unicode property 'Han' at offset 7");
  EXPECT_EQ(error("*a"), "regex '*a': nothing to repeat at offset 0");
  EXPECT_EQ(error("(?<n>a)"), "regex '(?<n>a)': unsupported group '(?<' at offset 1");
  EXPECT_EQ(error("[z-a]"), "regex '[z-a]': range out of order at offset 4");
  EXPECT_EQ(error("a{3,2}"), "regex 'a{3,2}': {n,m} with m < n at offset 1");
}

// llama.cpp's std::regex split of one piece: matches and the gaps between them.
std::vector<size_t> wregex_split(const std::wstring& text, const std::wregex& re) {
  std::vector<size_t> out;
  int64_t at = 0;
  for (std::wsregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    if (it->position() > at) out.push_back(size_t(it->position() - at));
    if (it->length() > 0) out.push_back(size_t(it->length()));
    at = it->position() + it->length();
  }
  if (at < int64_t(text.size())) out.push_back(size_t(int64_t(text.size()) - at));
  return out;
}

TEST(Regex, SplitsAsStdWregexDoes) {
  // Patterns both engines take (no \p, no non-ASCII whitespace in the texts), including
  // pre-tokenizer shapes with ASCII classes and lookaheads that match empty.
  const std::vector<std::string> patterns = {
      "'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\\sA-Za-z0-9]+|\\s+(?!\\S)|\\s+",
      "(?:'[sS]|'[tT])|[^\\r\\nA-Za-z0-9]?[A-Za-z]+|[0-9]{1,3}| ?[^\\sA-Za-z0-9]+[\\r\\n]*"
      "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      "\\s?[!-/:-~]+",
      "\\s+$",
      "[0-9][0-9][0-9]",
      "[\\r\\n]",
      "[\xE4\xB8\x80-\xE9\xBE\xA5\xC3\x80-\xC3\x96]+",  // [一-龥À-Ö]+
      "(?=([0-9]{3})+(?![0-9]))",
      "a*?b|a+",
      "(ab|a)(c|bcd)|x+",
      "[^(\\s|.,!?)]+"};
  const std::vector<uint32_t> alphabet = {
      'a',  'b',  'c',  'd', 'x', 'S', 'T', 'Z', '0', '1',  '7',  ' ',    ' ',    '\n',
      '\r', '\t', '\'', '.', ',', '!', '(', '|', '~', 0xC0, 0xD6, 0x4E00, 0x9FA5, 0x3042};
  std::mt19937 rng(7);
  for (const std::string& p : patterns) {
    const Regex mine(p);
    const auto pcp = decode_utf8(p);
    const std::wregex ref(std::wstring(pcp.begin(), pcp.end()));
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<uint32_t> cps(rng() % 24);
      for (auto& c : cps) c = alphabet[rng() % alphabet.size()];
      const std::wstring w(cps.begin(), cps.end());
      ASSERT_EQ(split_by_patterns(cps, {}).size(), cps.empty() ? 0u : 1u);
      std::vector<Regex> one;
      one.emplace_back(p);
      ASSERT_EQ(split_by_patterns(cps, one), wregex_split(w, ref)) << p << " trial " << trial;
    }
  }
}

TEST(Unicode, CategoriesAndWhiteSpace) {
  using G = GeneralCategory;
  EXPECT_EQ(general_category('A'), G::Lu);
  EXPECT_EQ(general_category('a'), G::Ll);
  EXPECT_EQ(general_category('0'), G::Nd);
  EXPECT_EQ(general_category('$'), G::Sc);
  EXPECT_EQ(general_category('~'), G::Sm);
  EXPECT_EQ(general_category('_'), G::Pc);
  EXPECT_EQ(general_category(0xE9), G::Ll);     // é
  EXPECT_EQ(general_category(0x4E00), G::Lo);   // 一 (inside a First/Last range)
  EXPECT_EQ(general_category(0x0301), G::Mn);   // combining acute
  EXPECT_EQ(general_category(0x2167), G::Nl);   // Ⅷ
  EXPECT_EQ(general_category(0x1F999), G::So);  // 🦙
  EXPECT_EQ(general_category(0xE000), G::Co);
  EXPECT_EQ(general_category(0xD800), G::Cs);
  EXPECT_EQ(general_category(0x0378), G::Cn);  // unassigned
  EXPECT_EQ(general_category(0x10FFFF), G::Cn);
  EXPECT_EQ(general_category(0x110000), G::Cn);
  for (uint32_t c : {0x09u, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x2028u, 0x3000u})
    EXPECT_TRUE(is_white_space(c)) << c;
  for (uint32_t c : {0x08u, 0x1Cu, 0x200Bu, 0x61u}) EXPECT_FALSE(is_white_space(c)) << c;
  EXPECT_EQ(category_mask("L"), category_bit(G::Lu) | category_bit(G::Ll) | category_bit(G::Lt) |
                                    category_bit(G::Lm) | category_bit(G::Lo));
  EXPECT_EQ(category_mask("Nd"), category_bit(G::Nd));
  EXPECT_EQ(category_mask("Han"), 0u);
}

TEST(Unicode, Utf8AsLlamaCpp) {
  EXPECT_EQ(decode_utf8("a\xC3\xA9\xF0\x9F\xA6\x99"), (std::vector<uint32_t>{'a', 0xE9, 0x1F999}));
  // Invalid or cut sequences: one U+FFFD per byte that starts nothing valid.
  EXPECT_EQ(decode_utf8("\xFF\xC3"), (std::vector<uint32_t>{0xFFFD, 0xFFFD}));
  EXPECT_EQ(decode_utf8("\xE6\x97"
                        "a"),
            (std::vector<uint32_t>{0xFFFD, 0xFFFD, 'a'}));
  std::string s;
  for (uint32_t c : {0x41u, 0xE9u, 0x4E00u, 0x1F999u}) append_utf8(s, c);
  EXPECT_EQ(s, "A\xC3\xA9\xE4\xB8\x80\xF0\x9F\xA6\x99");
}

W split(const char* pre, const std::string& text) {
  return pretokenize(require_pre_tokenizer(pre), text);
}

TEST(PreTokenizer, Llama3AndQwen2) {
  const std::string t = "Hello World 1234567 it's\n\n  ok";
  EXPECT_EQ(split("llama-bpe", t),
            (W{"Hello", " World", " ", "123", "456", "7", " it", "'s", "\n\n", " ", " ok"}));
  EXPECT_EQ(split("qwen2", t), (W{"Hello", " World", " ", "1", "2", "3", "4", "5", "6", "7", " it",
                                  "'s", "\n\n", " ", " ok"}));
  EXPECT_EQ(split("llama3", "IT'S"), (W{"IT", "'S"}));  // contractions in either case
  EXPECT_EQ(split("gpt-2", "IT'S"), (W{"IT", "'", "S"}));
}

TEST(PreTokenizer, DigitRules) {
  EXPECT_EQ(split("starcoder", "abc 123"), (W{"abc", " ", "1", "2", "3"}));
  EXPECT_EQ(split("falcon", "Hello, 12345!! $x"),
            (W{"Hello", ",", " ", "123", "45", "!!", " ", "$", "x"}));
  EXPECT_EQ(split("default", "a+b 1234"), (W{"a", "+", "b", " ", "123", "4"}));
  EXPECT_EQ(split("", "a+b 1234"), split("default", "a+b 1234"));  // no name: default
  EXPECT_EQ(split("superbpe", "x1234567"), (W{"x", "1", "234", "567"}));
}

TEST(PreTokenizer, DeepSeek) {
  EXPECT_EQ(split("deepseek-coder", "x = 10;\n"), (W{"x", " = ", "1", "0", ";", "\n"}));
  EXPECT_EQ(split("deepseek-llm", "Hi 12 ok  "), (W{"Hi", " ", "12", " ok", "  "}));
  // CJK runs and Greek letters of DeepSeek's cased-letter class.
  EXPECT_EQ(split("deepseek-llm", "\xE4\xB8\xAD\xE6\x96\x87 \xCE\xB1\xCE\xB2"),
            (W{"\xE4\xB8\xAD\xE6\x96\x87", " \xCE\xB1\xCE\xB2"}));
}

TEST(PreTokenizer, OtherFamilies) {
  EXPECT_EQ(split("bloom", "Hello, world!"), (W{"Hello", ",", " world", "!"}));
  EXPECT_EQ(split("tekken", "HelloWorld ABC"), (W{"Hello", "World", " ABC"}));
  EXPECT_EQ(split("gpt-4o", "HelloWorld's 12345"), (W{"Hello", "World's", " ", "123", "45"}));
}

TEST(PreTokenizer, NamesAndFlags) {
  EXPECT_EQ(find_pre_tokenizer("qwen9"), nullptr);
  try {
    require_pre_tokenizer("qwen9");
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "tokenizer.ggml.pre: unknown pre-tokenizer type: 'qwen9'");
  }
  const auto names = pre_tokenizer_names();
  for (const char* n : {"llama-bpe", "qwen2", "deepseek-llm", "deepseek-coder", "falcon",
                        "starcoder", "refact", "gpt-2", "mpt", "default"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_TRUE(require_pre_tokenizer("llama-bpe").ignore_merges);
  EXPECT_TRUE(require_pre_tokenizer("llama-bpe").add_bos);
  EXPECT_FALSE(require_pre_tokenizer("qwen2").ignore_merges);
  EXPECT_EQ(require_pre_tokenizer("refact").type, "starcoder");
}

}  // namespace
}  // namespace sy::text::detail
