// Checks a Grammar the matcher can walk: no rule reaches itself before consuming a character
// (left recursion, including through rules that match nothing), which would expand forever.
#pragma once

#include "grammar/grammar.h"

namespace sy::grammar {

// Throws Error naming the rule.
void check(const Grammar& g);

}  // namespace sy::grammar
