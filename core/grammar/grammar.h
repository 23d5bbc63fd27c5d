// A context-free grammar over Unicode code points, in the form the matcher walks: each rule's
// body is a flat run of elements, alternatives separated by `alt` and the body closed by `end`
// (llama.cpp's GBNF grammars lower to the same shape). Repetitions are already rewritten into
// helper rules, so an element is a character class or a rule reference.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sy::grammar {

// A grammar or JSON schema that cannot be used; the message names the line and column, the rule
// or the schema path.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Op : uint8_t {
  end,    // end of a rule body
  alt,    // next alternative
  rule,   // value: rule id
  chars,  // value: index into Grammar::classes
};

struct Element {
  Op op;
  uint32_t value;
};

// Code point ranges [first, last]; `negated` matches what none of them does. A literal character
// is one range of one code point; `.` is a negated empty class.
struct CharClass {
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  bool matches(uint32_t cp) const {
    bool in = false;
    for (const auto& [lo, hi] : ranges)
      if (cp >= lo && cp <= hi) {
        in = true;
        break;
      }
    return in != negated;
  }
  // Whether some code point in [lo, hi] matches (a UTF-8 sequence still incomplete).
  bool overlaps(uint32_t lo, uint32_t hi) const;
};

struct Grammar {
  std::vector<Element> elements;   // every rule body, each closed by Op::end
  std::vector<uint32_t> bodies;    // rule id -> index of its body's first element
  std::vector<std::string> names;  // rule id -> name (helper rules: "name-3")
  std::vector<CharClass> classes;
  uint32_t root = 0;
};

// Limits on what one grammar may grow to (a request carries it).
struct Limits {
  size_t max_elements = 1u << 20;  // after repetitions are expanded
  uint32_t max_repeat = 10000;     // largest {m,n} bound
  size_t max_depth = 200;          // parenthesis nesting
};

}  // namespace sy::grammar
