// libFuzzer: any bytes as a GBNF grammar, or, when they start with '{', as a JSON schema turned
// into one. After a line "#--input--" the rest is text fed to the matcher byte by byte, with the
// mask of a small fixed vocabulary taken at every step. Only sy::grammar::Error may escape;
// anything else (a sanitizer report, a hang, a mask that allows a token feeding refuses) is a
// finding.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/token_trie.h"

namespace {

const sy::grammar::TokenTrie& vocab() {
  static const sy::grammar::TokenTrie trie(
      {"",    "{",   "}",     "[",   "]",    "\"",   ":",    ",",  " ",
       "\n",  "a",   "ab",    "abc", "true", "null", "0",    "12", "-",
       ".",   "e",   "\\",    "\\n", "é",    "\xc3", "\xa9", "€",  "\xf0\x9f\x98\x80",
       "{\"", "\":", "\",\"", "yes"});
  return trie;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view input;
  constexpr std::string_view mark = "\n#--input--\n";
  if (const size_t at = text.find(mark); at != std::string_view::npos) {
    input = text.substr(at + mark.size());
    text = text.substr(0, at);
  }
  sy::grammar::Limits lim;
  lim.max_elements = 1u << 16;
  lim.max_repeat = 200;
  try {
    std::string gbnf(text);
    if (!text.empty() && text[0] == '{') {
      const auto schema = nlohmann::ordered_json::parse(text, nullptr, false);
      if (schema.is_discarded()) return 0;
      gbnf = sy::grammar::json_schema_gbnf(schema);
    }
    auto g = std::make_shared<const sy::grammar::Grammar>(sy::grammar::parse_gbnf(gbnf, lim));
    sy::grammar::Matcher m(g);
    sy::grammar::ByteState s{m.start(), 0, 0, 0};
    std::vector<uint8_t> allowed;
    for (size_t i = 0; i <= input.size() && i < 256; ++i) {
      vocab().allowed(m, s, allowed);
      for (int32_t id = 0; id < vocab().size(); ++id) {
        const auto e = sy::grammar::TokenTrie::feed(m, s, vocab().bytes(id));
        const bool ok =
            !vocab().bytes(id).empty() && e.set != sy::grammar::Matcher::kDead && m.can_complete(e);
        if (ok != (allowed[size_t(id)] != 0)) std::abort();  // the mask and feeding disagree
      }
      if (i == input.size()) break;
      s = m.feed(s, uint8_t(input[i]));
      if (s.set == sy::grammar::Matcher::kDead) break;
      if (m.size() > 5000) s.set = m.drop(s.set);
    }
  } catch (const sy::grammar::Error&) {
  }
  return 0;
}
