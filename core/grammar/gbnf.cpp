// GBNF text -> Grammar. Rules are parsed into per-rule bodies, repetitions rewritten into helper
// rules (named "<rule>_<n>": '_' cannot appear in a GBNF name, so they never collide), then the
// whole grammar is checked and flattened.
#include "grammar/gbnf.h"

#include <map>
#include <optional>
#include <unordered_map>

#include "grammar/check.h"

namespace sy::grammar {

namespace {

constexpr uint32_t kUnbounded = UINT32_MAX;

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

class Parser {
 public:
  Parser(std::string_view text, const Limits& limits) : s_(text), lim_(limits) {}

  Grammar run(std::string_view root) {
    space(true);
    while (i_ < s_.size()) {
      rule();
      space(true);
    }
    for (size_t r = 0; r < bodies_.size(); ++r)
      if (!defined_[r]) fail_at(first_use_[r], "undefined rule '" + names_[r] + "'");
    const auto it = ids_.find(std::string(root));
    if (it == ids_.end() || !defined_[it->second])
      throw Error("the grammar has no rule '" + std::string(root) + "'");
    Grammar g;
    g.root = it->second;
    g.names = names_;
    g.classes = std::move(classes_);
    for (auto& body : bodies_) {
      g.bodies.push_back(uint32_t(g.elements.size()));
      g.elements.insert(g.elements.end(), body.begin(), body.end());
    }
    check(g);
    return g;
  }

 private:
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < at && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error("grammar line " + std::to_string(line) + " column " + std::to_string(col) + ": " +
                what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(i_, what); }

  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }

  void space(bool newline_ok) {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
      } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++i_;
      } else {
        break;
      }
    }
  }

  std::string name() {
    const size_t b = i_;
    while (i_ < s_.size() && word_char(s_[i_])) ++i_;
    if (b == i_) fail("expected a rule name");
    return std::string(s_.substr(b, i_ - b));
  }

  uint32_t id_of(const std::string& n, size_t used_at) {
    const auto [it, fresh] = ids_.try_emplace(n, uint32_t(bodies_.size()));
    if (fresh) {
      bodies_.emplace_back();
      names_.push_back(n);
      defined_.push_back(false);
      first_use_.push_back(used_at);
    }
    return it->second;
  }

  uint32_t helper(const std::string& base, std::vector<Element> body) {
    const uint32_t id = id_of(base + "_" + std::to_string(++helpers_), i_);
    body.push_back({Op::end, 0});
    grow(body.size());
    bodies_[id] = std::move(body);
    defined_[id] = true;
    return id;
  }

  void grow(size_t n) {
    total_ += n;
    if (total_ > lim_.max_elements)
      fail("the grammar grows past " + std::to_string(lim_.max_elements) + " elements");
  }

  void rule() {
    const size_t b = i_;
    const std::string n = name();
    space(false);
    if (s_.substr(i_, 3) != "::=") fail("expected ::= after '" + n + "'");
    i_ += 3;
    space(true);
    const uint32_t id = id_of(n, b);
    if (defined_[id]) fail_at(b, "rule '" + n + "' is defined twice");
    defined_[id] = true;  // before the body: a helper may grow bodies_
    std::vector<Element> body = alternatives(n, false);
    grow(body.size());
    bodies_[id] = std::move(body);
    if (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r')
      fail("unexpected '" + std::string(1, s_[i_]) + "'");
  }

  std::vector<Element> alternatives(const std::string& rule_name, bool nested) {
    std::vector<Element> out;
    sequence(rule_name, out, nested);
    while (at('|')) {
      out.push_back({Op::alt, 0});
      ++i_;
      space(true);
      sequence(rule_name, out, nested);
    }
    out.push_back({Op::end, 0});
    return out;
  }

  uint32_t char_class(bool negated, std::vector<std::pair<uint32_t, uint32_t>> ranges) {
    const auto key = std::make_pair(negated, ranges);
    const auto [it, fresh] = class_ids_.try_emplace(key, uint32_t(classes_.size()));
    if (fresh) classes_.push_back({negated, std::move(ranges)});
    return it->second;
  }

  uint32_t utf8_char() {
    const auto b0 = static_cast<unsigned char>(s_[i_]);
    const int len = b0 < 0x80         ? 1
                    : (b0 >> 5) == 6  ? 2
                    : (b0 >> 4) == 14 ? 3
                    : (b0 >> 3) == 30 ? 4
                                      : 0;
    if (len == 0 || i_ + size_t(len) > s_.size()) fail("invalid UTF-8");
    uint32_t cp = len == 1 ? b0 : b0 & (0x7f >> len);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s_[i_ + size_t(k)]);
      if ((b >> 6) != 2) fail("invalid UTF-8");
      cp = (cp << 6) | (b & 0x3f);
    }
    i_ += size_t(len);
    return cp;
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k, ++i_) {
      if (i_ >= s_.size()) fail("incomplete escape");
      const char c = s_[i_];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) fail("expected a hex digit");
      v = v * 16 + uint32_t(d);
    }
    if (v > 0x10FFFF) fail("code point out of range");
    return v;
  }

  // One character of a literal or class, escapes decoded.
  uint32_t one_char() {
    if (i_ >= s_.size()) fail("unexpected end of grammar");
    if (s_[i_] != '\\') return utf8_char();
    if (++i_ >= s_.size()) fail("incomplete escape");
    const char e = s_[i_++];
    switch (e) {
      case 'x':
        return hex(2);
      case 'u':
        return hex(4);
      case 'U':
        return hex(8);
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'n':
        return '\n';
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
        return uint32_t(e);
      default:
        --i_;
        fail("unknown escape '\\" + std::string(1, e) + "'");
    }
  }

  void sequence(const std::string& rule_name, std::vector<Element>& out, bool nested) {
    std::optional<size_t> last;  // where the last symbol starts, for a repetition
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        last = out.size();
        ++i_;
        while (!at('"')) {
          if (i_ >= s_.size() || s_[i_] == '\n') fail("unterminated literal");
          const uint32_t cp = one_char();
          out.push_back({Op::chars, char_class(false, {{cp, cp}})});
        }
        ++i_;
      } else if (c == '[') {
        last = out.size();
        ++i_;
        const bool negated = at('^');
        if (negated) ++i_;
        std::vector<std::pair<uint32_t, uint32_t>> ranges;
        while (!at(']')) {
          if (i_ >= s_.size() || s_[i_] == '\n') fail("unterminated character class");
          const uint32_t lo = one_char();
          uint32_t hi = lo;
          if (at('-') && i_ + 1 < s_.size() && s_[i_ + 1] != ']') {
            ++i_;
            hi = one_char();
            if (hi < lo) fail("character range is out of order");
          }
          ranges.emplace_back(lo, hi);
        }
        ++i_;
        out.push_back({Op::chars, char_class(negated, std::move(ranges))});
      } else if (c == '.') {
        last = out.size();
        ++i_;
        out.push_back({Op::chars, char_class(true, {})});
      } else if (word_char(c)) {
        last = out.size();
        const size_t b = i_;
        out.push_back({Op::rule, id_of(name(), b)});
      } else if (c == '(') {
        last = out.size();
        ++i_;
        if (++depth_ > lim_.max_depth)
          fail("groups nest deeper than " + std::to_string(lim_.max_depth));
        space(true);
        std::vector<Element> body = alternatives(rule_name, true);
        body.pop_back();  // helper() closes it
        if (!at(')')) fail("expected ')'");
        ++i_;
        --depth_;
        out.push_back({Op::rule, helper(rule_name, std::move(body))});
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!last) fail("'" + std::string(1, c) + "' follows no symbol");
        if (*last == out.size()) fail("'" + std::string(1, c) + "' repeats an empty literal");
        uint32_t min = 0, max = kUnbounded;
        ++i_;
        if (c == '+') min = 1;
        if (c == '?') max = 1;
        if (c == '{') bounds(min, max);
        repeat(rule_name, out, *last, min, max);
        last.reset();
      } else {
        break;
      }
      space(nested);
    }
  }

  uint32_t number() {
    const size_t b = i_;
    uint64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      v = v * 10 + uint64_t(s_[i_++] - '0');
      if (v > lim_.max_repeat)
        fail_at(b, "repetition bound above " + std::to_string(lim_.max_repeat));
    }
    if (b == i_) fail("expected a number");
    return uint32_t(v);
  }

  void bounds(uint32_t& min, uint32_t& max) {
    space(false);
    if (at(',')) {
      min = 0;
    } else {
      min = number();
      space(false);
      max = min;
    }
    if (at(',')) {
      ++i_;
      space(false);
      max = at('}') ? kUnbounded : number();
      space(false);
    }
    if (!at('}')) fail("expected '}'");
    ++i_;
    if (max < min) fail("repetition bounds out of order");
  }

  // out[start..] repeated min..max times (max kUnbounded: no limit).
  void repeat(const std::string& rule_name, std::vector<Element>& out, size_t start, uint32_t min,
              uint32_t max) {
    std::vector<Element> symbol(out.begin() + std::ptrdiff_t(start), out.end());
    out.resize(start);
    const uint32_t x = symbol.size() == 1 && symbol[0].op == Op::rule
                           ? symbol[0].value
                           : helper(rule_name, std::move(symbol));
    grow(min);
    out.insert(out.end(), min, Element{Op::rule, x});
    if (max == kUnbounded) {
      // r ::= x r | (empty)
      const uint32_t r = id_of(rule_name + "_" + std::to_string(++helpers_), i_);
      bodies_[r] = {{Op::rule, x}, {Op::rule, r}, {Op::alt, 0}, {Op::end, 0}};
      defined_[r] = true;
      grow(4);
      out.push_back({Op::rule, r});
    } else if (max > min) {
      // o_k ::= x | (empty); o_j ::= x o_(j+1) | (empty)
      uint32_t inner = 0;  // the optional tail built so far (none on the first round)
      for (uint32_t k = max - min; k > 0; --k) {
        std::vector<Element> body{{Op::rule, x}};
        if (k < max - min) body.push_back({Op::rule, inner});
        body.push_back({Op::alt, 0});
        inner = helper(rule_name, std::move(body));
      }
      out.push_back({Op::rule, inner});
    }
  }

  std::string_view s_;
  const Limits& lim_;
  size_t i_ = 0, depth_ = 0, total_ = 0;
  uint32_t helpers_ = 0;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::vector<Element>> bodies_;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  std::vector<size_t> first_use_;
  std::vector<CharClass> classes_;
  std::map<std::pair<bool, std::vector<std::pair<uint32_t, uint32_t>>>, uint32_t> class_ids_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text, const Limits& limits, std::string_view root) {
  return Parser(text, limits).run(root);
}

}  // namespace sy::grammar
