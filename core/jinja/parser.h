// Tokens to statements, by Jinja2's grammar and operator precedence.
#pragma once

#include <string_view>

#include "jinja/ast.h"

namespace sy::jinja {

// Throws Error naming the line on a syntax error, an unknown or unclosed tag, or nesting past
// max_depth.
Body parse(std::string_view source, int max_depth = 200);

}  // namespace sy::jinja
