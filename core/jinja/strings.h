// Python's str operations over Text (strip, split, case), keeping which bytes came from data.
#pragma once

#include <string_view>
#include <vector>

#include "jinja/value.h"

namespace sy::jinja {

enum class Side { both, left, right };

// str.strip(): Unicode whitespace when chars is null, else any code point of *chars.
Text strip(const Text& s, const std::string* chars, Side side);
// str.split(sep=None, maxsplit=-1); rsplit when from_right.
List split(const Text& s, const std::string* sep, int64_t maxsplit, bool from_right = false);
List splitlines(const Text& s, bool keepends);
// str.replace(old, new, count=-1).
Text replace(const Text& s, std::string_view old, const Text& with, int64_t count = -1);

enum class Case { upper, lower, title, capitalize, swap };
// Python's case mapping for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters; other
// code points keep their bytes.
Text change_case(const Text& s, Case c);
// str.islower() (c lower) or str.isupper() (c upper): has cased letters, all in that case.
bool in_case(const Text& s, Case c);

// Throws Error past `limit` bytes.
Text join(const List& items, const Text& sep, size_t limit = kMaxText);
// markupsafe's escape: & < > " ' as entities.
Text html_escape(const Text& s);
bool tainted(const Value& v);

}  // namespace sy::jinja
