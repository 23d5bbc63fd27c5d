// Template source to tokens, with Jinja2's whitespace rules as transformers configures them
// (trim_blocks, lstrip_blocks) and the per-tag controls {%- -%} {%+ +%} {{- -}} {#- -#}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sy::jinja {

enum class Tok {
  text,
  var_begin,
  var_end,
  block_begin,
  block_end,
  name,
  string,
  integer,
  real,
  op,
  eof
};

struct Token {
  Tok type;
  std::string value;  // text, name, the string's decoded bytes, the number's digits, the operator
  int line;
};

// Throws Error (the line of the fault) on an unterminated tag, string or raw block, or a
// character no token starts with.
std::vector<Token> lex(std::string_view source);

}  // namespace sy::jinja
