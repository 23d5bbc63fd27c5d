// The integers of a range as a GBNF expression over their decimal text (no leading zeros, "-"
// before a negative): JSON Schema's minimum / maximum on an integer, as llama.cpp's
// json-schema-to-grammar writes them, digit by digit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sy::grammar {

// Bounds are inclusive; an absent one is open. Integers run to 16 digits, as the grammar's
// plain integers do: |bound| must be below 10^15. Throws std::invalid_argument when the range
// is empty or a bound is out of reach.
std::string int_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace sy::grammar
