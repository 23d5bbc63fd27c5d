// GBNF, llama.cpp's grammar format (grammars/README.md there): `name ::= alternatives` rules,
// "literals" with \n \t \xHH \uHHHH escapes, [character classes], `.`, groups, and the
// repetitions * + ? {m} {m,} {m,n}. The result is checked: every referenced rule defined, the
// root present, no left recursion (the matcher would loop).
#pragma once

#include <string_view>

#include "grammar/grammar.h"

namespace sy::grammar {

// Throws Error naming the line and column, or the rule.
Grammar parse_gbnf(std::string_view text, const Limits& limits = {},
                   std::string_view root = "root");

}  // namespace sy::grammar
