// The byte-level vocab mkmodel writes, and the consistency checks every Vocab goes through.
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"
#include "text/tokenizer_impl.h"

namespace sy::text {

Vocab byte_level_vocab(int32_t n_vocab) {
  if (n_vocab < 259)
    throw sy::Error("byte_level_vocab needs n_vocab >= 259, got " + std::to_string(n_vocab));
  Vocab v;
  v.model = "llama";
  v.tokens.reserve(n_vocab);
  v.types.reserve(n_vocab);
  auto add = [&](std::string text, TokenType t) {
    v.tokens.push_back(std::move(text));
    v.types.push_back(t);
  };
  add("<unk>", TokenType::UNKNOWN);
  add("<s>", TokenType::CONTROL);
  add("</s>", TokenType::CONTROL);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, TokenType::BYTE);
  }
  for (int32_t i = 259; i < n_vocab; ++i) add("[PAD" + std::to_string(i) + "]", TokenType::UNUSED);
  v.scores.assign(n_vocab, 0.0f);
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

namespace detail {

void validate(const Vocab& v) {
  auto fail = [](const std::string& m) { throw sy::Error("vocab: " + m); };
  if (v.model != "llama" && v.model != "gpt2" && v.model != "gemma4")
    fail("model '" + v.model + "' is not supported (expected 'llama', 'gpt2' or 'gemma4')");
  if (v.model == "gemma4" && v.pre != "gemma4")
    fail("model 'gemma4' takes the 'gemma4' pre-tokenizer, not '" + v.pre + "'");
  const size_t n = v.tokens.size();
  if (n == 0) fail("no tokens");
  if (n > size_t(INT32_MAX)) fail("too many tokens");
  if (!v.scores.empty() && v.scores.size() != n)
    fail(std::to_string(v.scores.size()) + " scores for " + std::to_string(n) + " tokens");
  if (!v.types.empty() && v.types.size() != n)
    fail(std::to_string(v.types.size()) + " types for " + std::to_string(n) + " tokens");
  for (size_t i = 0; i < v.types.size(); ++i) {
    const auto t = static_cast<int32_t>(v.types[i]);
    if (t < 1 || t > 6) fail("token " + std::to_string(i) + " has type " + std::to_string(t));
  }
  auto check = [&](const char* what, int32_t id) {
    if (id < -1 || id >= int64_t(n))
      fail(std::string(what) + " id " + std::to_string(id) + " is out of range (" +
           std::to_string(n) + " tokens)");
  };
  check("bos", v.bos);
  check("eos", v.eos);
  check("unk", v.unk);
  check("pad", v.pad);
  check("eot", v.eot);
  check("eom", v.eom);
  if (v.model != "llama") {
    if (v.merges.empty()) fail(v.model + " needs merges");
    for (size_t i = 0; i < v.merges.size(); ++i) {
      // Like llama.cpp, the separator is the first space after the first character.
      const auto sp = v.merges[i].size() > 1 ? v.merges[i].find(' ', 1) : std::string::npos;
      if (sp == std::string::npos)
        fail("merge " + std::to_string(i) + " '" + v.merges[i] + "' is not of the form 'a b'");
    }
  }
}

}  // namespace detail
}  // namespace sy::text
