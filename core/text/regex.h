// A small backtracking regular expression matcher over code points: the subset of ECMAScript
// syntax that pre-tokenizer patterns (tokenizer.json "Split" regexes, as llama.cpp adapts them)
// are written in. Alternatives are tried in order and quantifiers are greedy unless followed by
// `?`, as in ECMAScript; \s is Unicode White_Space, \p{..} / \P{..} a general category or major
// class, \d and \w ASCII. Also: groups (capturing ones do not capture), (?: ), (?= ), (?! ), ^, $,
// \b, \B, `.`, classes with ranges and escapes, {n}, {n,}, {n,m}, \xHH, \x{H..}, \uHHHH.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace sy::text::detail {

class Regex {
 public:
  // Throws std::invalid_argument("regex ...: <problem> at offset N") for syntax it does not take.
  explicit Regex(std::string_view pattern);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // The end of the match that starts exactly at `pos` within text[begin, end) (^ and $ and the
  // lookarounds see only that window), or npos. not_empty: only a match longer than zero counts.
  size_t match_at(const std::vector<uint32_t>& text, size_t begin, size_t end, size_t pos,
                  bool not_empty = false) const;

  static constexpr size_t npos = static_cast<size_t>(-1);

  struct Program;

 private:
  std::unique_ptr<Program> prog_;
};

// llama.cpp's way of applying a list of split patterns: each pattern cuts every current piece of
// the text into its matches and the stretches between them (both kept, in order), and the next
// pattern works on those pieces. Returns the pieces' lengths in code points.
std::vector<size_t> split_by_patterns(const std::vector<uint32_t>& text,
                                      const std::vector<Regex>& patterns);

}  // namespace sy::text::detail
