// The pre-tokenizer regex: a recursive-descent parser into a node tree and a backtracking matcher
// that passes continuations, so that alternatives and quantifiers backtrack as in ECMAScript.
// Quantifiers over one code point loop instead of recursing, which keeps the stack shallow on
// long runs of letters or spaces.
#include "text/regex.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"
#include "text/unicode.h"

namespace sy::text::detail {

namespace {

bool is_word(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(uint32_t c) {
  return c >= '0' && c <= '9';
}

// A test of one code point: listed ranges, categories and the \s \d \w classes, possibly negated.
struct CharSet {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  uint32_t cats = 0, not_cats = 0;  // \p{..} and \P{..}
  bool space = false, not_space = false, digit = false, not_digit = false, word = false,
       not_word = false;
  bool negate = false;

  bool test(uint32_t c) const {
    bool in = false;
    for (const auto& r : ranges)
      if (c >= r.first && c <= r.second) {
        in = true;
        break;
      }
    if (!in && (cats | not_cats)) {
      const uint32_t bit = category_bit(general_category(c));
      in = (cats & bit) || (not_cats && !(not_cats & bit));
    }
    if (!in && (space || not_space)) {
      const bool ws = is_white_space(c);
      in = (space && ws) || (not_space && !ws);
    }
    if (!in && (digit || not_digit)) in = (digit && is_digit(c)) || (not_digit && !is_digit(c));
    if (!in && (word || not_word)) in = (word && is_word(c)) || (not_word && !is_word(c));
    return in != negate;
  }
};

enum class Kind { set, alt, group, repeat, look, bol, eol, word_boundary, not_word_boundary };

struct Node;
using Seq = std::vector<const Node*>;

struct Node {
  Kind kind = Kind::set;
  int set = -1;           // set: index into Program::sets
  std::vector<Seq> alts;  // alt
  Seq body;               // group, repeat, look
  size_t min = 0, max = 0;
  bool unbounded = false, greedy = true;  // repeat
  bool negate = false;                    // look: (?! )
  // repeat whose body is one code point: the sets it must pass (true) or fail (false)
  std::vector<std::pair<int, bool>> single;
};

}  // namespace

struct Regex::Program {
  std::vector<CharSet> sets;
  std::vector<std::unique_ptr<Node>> nodes;
  Seq top;
};

namespace {

using Program = Regex::Program;

class Parser {
 public:
  Parser(std::string_view src, Program& prog) : src_(src), p_(decode_utf8(src)), prog_(prog) {}

  Seq parse() {
    Seq s = parse_alt();
    if (i_ < p_.size()) fail("unbalanced ')'");
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw sy::Error("regex '" + std::string(src_) + "': " + what + " at offset " +
                    std::to_string(i_));
  }
  bool more() const { return i_ < p_.size(); }
  uint32_t peek(size_t ahead = 0) const { return i_ + ahead < p_.size() ? p_[i_ + ahead] : 0; }
  bool eat(uint32_t c) {
    if (more() && p_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  Node* node(Kind k) {
    prog_.nodes.push_back(std::make_unique<Node>());
    prog_.nodes.back()->kind = k;
    return prog_.nodes.back().get();
  }
  Node* set_node(CharSet s) {
    prog_.sets.push_back(std::move(s));
    Node* n = node(Kind::set);
    n->set = int(prog_.sets.size() - 1);
    return n;
  }

  Seq parse_alt() {
    std::vector<Seq> branches{parse_seq()};
    while (eat('|')) branches.push_back(parse_seq());
    if (branches.size() == 1) return branches[0];
    Node* n = node(Kind::alt);
    n->alts = std::move(branches);
    return {n};
  }

  Seq parse_seq() {
    Seq s;
    while (more() && peek() != '|' && peek() != ')') s.push_back(parse_quantified());
    return s;
  }

  // Reads {n}, {n,} or {n,m} when it is there; otherwise leaves the '{' to be a literal.
  bool parse_braces(size_t& lo, size_t& hi, bool& unbounded) {
    size_t j = i_ + 1;
    auto number = [&](size_t& out) {
      const size_t from = j;
      out = 0;
      while (j < p_.size() && is_digit(p_[j])) out = out * 10 + (p_[j++] - '0');
      return j > from;
    };
    if (!number(lo)) return false;
    hi = lo;
    unbounded = false;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!number(hi)) unbounded = true;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    if (!unbounded && hi < lo) fail("{n,m} with m < n");
    i_ = j + 1;
    return true;
  }

  const Node* parse_quantified() {
    const Node* atom = parse_atom();
    size_t lo = 0, hi = 0;
    bool unbounded = false;
    if (eat('*')) {
      unbounded = true;
    } else if (eat('+')) {
      lo = 1, unbounded = true;
    } else if (eat('?')) {
      hi = 1;
    } else if (!(peek() == '{' && parse_braces(lo, hi, unbounded))) {
      return atom;
    }
    if (atom->kind != Kind::set && atom->kind != Kind::group && atom->kind != Kind::alt)
      fail("nothing to repeat");
    Node* r = node(Kind::repeat);
    r->body = atom->kind == Kind::group ? atom->body : Seq{atom};
    r->min = lo, r->max = hi, r->unbounded = unbounded;
    r->greedy = !eat('?');
    r->single = single_code_point(r->body);
    return r;
  }

  // Groups hold no captures, so a group of one element is that element.
  static Seq flatten(const Seq& s) {
    Seq out;
    for (const Node* n : s) {
      if (n->kind == Kind::group) {
        const Seq inner = flatten(n->body);
        out.insert(out.end(), inner.begin(), inner.end());
      } else {
        out.push_back(n);
      }
    }
    return out;
  }

  // A body that is lookaheads over one code point followed by one set consumes exactly one code
  // point: the repeat can then loop (as in ((?=[\p{L}])([^a-z]))*).
  static std::vector<std::pair<int, bool>> single_code_point(const Seq& body) {
    const Seq s = flatten(body);
    std::vector<std::pair<int, bool>> out;
    if (s.empty() || s.back()->kind != Kind::set) return {};
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      if (s[k]->kind != Kind::look) return {};
      const Seq inner = flatten(s[k]->body);
      if (inner.size() != 1 || inner[0]->kind != Kind::set) return {};
      out.emplace_back(inner[0]->set, !s[k]->negate);
    }
    out.emplace_back(s.back()->set, true);
    return out;
  }

  const Node* parse_atom() {
    const uint32_t c = p_[i_++];
    switch (c) {
      case '(': {
        Kind k = Kind::group;
        bool negate = false;
        if (peek() == '?') {
          if (peek(1) == ':') {
          } else if (peek(1) == '=') {
            k = Kind::look;
          } else if (peek(1) == '!') {
            k = Kind::look, negate = true;
          } else {
            fail("unsupported group '(?" + std::string(1, char(peek(1))) + "'");
          }
          i_ += 2;
        }
        Node* n = node(k);
        n->negate = negate;
        n->body = parse_alt();
        if (!eat(')')) fail("missing ')'");
        return n;
      }
      case '[':
        return set_node(parse_class());
      case '.': {
        CharSet s;
        s.ranges = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};
        s.negate = true;
        return set_node(std::move(s));
      }
      case '^':
        return node(Kind::bol);
      case '$':
        return node(Kind::eol);
      case '\\': {
        if (peek() == 'b' || peek() == 'B')
          return node(p_[i_++] == 'b' ? Kind::word_boundary : Kind::not_word_boundary);
        CharSet s;
        if (!class_escape(s)) {
          const uint32_t lit = literal_escape();
          s.ranges.emplace_back(lit, lit);
        }
        return set_node(std::move(s));
      }
      case '*':
      case '+':
      case '?':
        --i_;
        fail("nothing to repeat");
      default: {
        CharSet s;
        s.ranges.push_back({c, c});
        return set_node(std::move(s));
      }
    }
  }

  // After a backslash: \s \S \d \D \w \W \p{..} \P{..} into `s`; false (nothing read) otherwise.
  bool class_escape(CharSet& s) {
    if (!more()) fail("trailing backslash");
    switch (peek()) {
      case 's':
        s.space = true;
        break;
      case 'S':
        s.not_space = true;
        break;
      case 'd':
        s.digit = true;
        break;
      case 'D':
        s.not_digit = true;
        break;
      case 'w':
        s.word = true;
        break;
      case 'W':
        s.not_word = true;
        break;
      case 'p':
      case 'P': {
        const bool neg = peek() == 'P';
        i_ += 1;
        if (!eat('{')) fail("\\p needs {name}");
        std::string name;
        while (more() && peek() != '}') name += char(p_[i_++]);
        if (!eat('}')) fail("unterminated \\p{");
        const uint32_t mask = category_mask(name);
        if (!mask) fail("unknown Unicode property '" + name + "'");
        (neg ? s.not_cats : s.cats) |= mask;
        return true;
      }
      default:
        return false;
    }
    ++i_;
    return true;
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    for (size_t k = 0; k < digits; ++k) {
      const uint32_t d = peek();
      const int x = is_digit(d)              ? int(d - '0')
                    : (d >= 'a' && d <= 'f') ? int(d - 'a' + 10)
                    : (d >= 'A' && d <= 'F') ? int(d - 'A' + 10)
                                             : -1;
      if (x < 0) fail("bad hex escape");
      v = v * 16 + uint32_t(x);
      ++i_;
    }
    return v;
  }

  // After a backslash: one code point (\n, \t, \xHH, \x{..}, \uHHHH, or the character itself).
  uint32_t literal_escape() {
    if (!more()) fail("trailing backslash");
    const uint32_t c = p_[i_++];
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      case '0':
        return 0;
      case 'u':
        return hex(4);
      case 'x':
        if (eat('{')) {
          uint32_t v = 0;
          size_t n = 0;
          while (more() && peek() != '}') v = v * 16 + hex(1), ++n;
          if (!eat('}') || n == 0 || v > 0x10FFFF) fail("bad \\x{...} escape");
          return v;
        }
        return hex(2);
      default:
        if (is_word(c)) fail("unknown escape '\\" + std::string(1, char(c)) + "'");
        return c;
    }
  }

  CharSet parse_class() {
    CharSet s;
    s.negate = eat('^');
    while (true) {
      if (!more()) fail("missing ']'");
      if (eat(']')) break;
      uint32_t lo;
      if (eat('\\')) {
        if (class_escape(s)) continue;
        lo = peek() == 'b' ? (++i_, 0x08u) : literal_escape();
      } else {
        lo = p_[i_++];
      }
      uint32_t hi = lo;
      if (peek() == '-' && peek(1) != ']' && i_ + 1 < p_.size()) {
        ++i_;
        if (eat('\\')) {
          CharSet dummy;
          if (class_escape(dummy)) fail("a class escape cannot end a range");
          hi = literal_escape();
        } else {
          hi = p_[i_++];
        }
        if (hi < lo) fail("range out of order");
      }
      s.ranges.emplace_back(lo, hi);
    }
    return s;
  }

  std::string_view src_;
  std::vector<uint32_t> p_;
  size_t i_ = 0;
  Program& prog_;
};

// What follows the part being matched: the rest of a sequence, or one more turn of a repeat.
struct Cont {
  const Seq* seq;
  size_t idx;
  const Cont* next;
  const Node* rep = nullptr;  // set: resuming re-enters this repeat
  size_t count = 0;           // its iterations so far, this one included
  size_t rep_start = 0;       // where this iteration began
};

class Matcher {
 public:
  Matcher(const Program& p, const std::vector<uint32_t>& t, size_t begin, size_t end, size_t start,
          bool not_empty)
      : p_(p), t_(t), begin_(begin), end_(end), start_(start), not_empty_(not_empty) {}

  bool run(const Seq& s, size_t i, size_t pos, const Cont* k) {
    for (; i < s.size(); ++i) {
      const Node& n = *s[i];
      switch (n.kind) {
        case Kind::set:
          if (pos >= end_ || !p_.sets[n.set].test(t_[pos])) return false;
          ++pos;
          break;
        case Kind::bol:
          if (pos != begin_) return false;
          break;
        case Kind::eol:
          if (pos != end_) return false;
          break;
        case Kind::word_boundary:
        case Kind::not_word_boundary: {
          const bool a = pos > begin_ && is_word(t_[pos - 1]);
          const bool b = pos < end_ && is_word(t_[pos]);
          if ((a != b) != (n.kind == Kind::word_boundary)) return false;
          break;
        }
        case Kind::look: {
          Matcher sub(p_, t_, begin_, end_, pos, false);
          if (sub.run(n.body, 0, pos, nullptr) == n.negate) return false;
          break;
        }
        case Kind::group: {
          const Cont c{&s, i + 1, k};
          return run(n.body, 0, pos, &c);
        }
        case Kind::alt: {
          const Cont c{&s, i + 1, k};
          for (const Seq& b : n.alts)
            if (run(b, 0, pos, &c)) return true;
          return false;
        }
        case Kind::repeat:
          if (!n.single.empty()) return repeat_single(n, pos, s, i + 1, k);
          return repeat(n, 0, pos, s, i + 1, k);
      }
    }
    if (k) return resume(k, pos);
    if (not_empty_ && pos == start_) return false;
    result = pos;
    return true;
  }

  size_t result = Regex::npos;

 private:
  bool resume(const Cont* k, size_t pos) {
    if (!k->rep) return run(*k->seq, k->idx, pos, k->next);
    // ECMAScript: an iteration past the minimum that consumed nothing fails.
    if (pos == k->rep_start && k->count > k->rep->min) return false;
    return repeat(*k->rep, k->count, pos, *k->seq, k->idx, k->next);
  }

  bool repeat(const Node& n, size_t count, size_t pos, const Seq& s, size_t i, const Cont* k) {
    auto more = [&] {
      if (!n.unbounded && count >= n.max) return false;
      const Cont c{&s, i, k, &n, count + 1, pos};
      return run(n.body, 0, pos, &c);
    };
    auto done = [&] { return count >= n.min && run(s, i, pos, k); };
    return n.greedy ? (more() || done()) : (done() || more());
  }

  bool single_ok(const Node& n, uint32_t c) const {
    for (const auto& [set, want] : n.single)
      if (p_.sets[set].test(c) != want) return false;
    return true;
  }

  bool repeat_single(const Node& n, size_t pos, const Seq& s, size_t i, const Cont* k) {
    const size_t room = end_ - pos;
    const size_t cap = n.unbounded ? room : std::min(room, n.max);
    if (n.greedy) {
      size_t c = 0;
      while (c < cap && single_ok(n, t_[pos + c])) ++c;
      if (c < n.min) return false;
      for (size_t m = c + 1; m-- > n.min;)
        if (run(s, i, pos + m, k)) return true;
      return false;
    }
    for (size_t m = 0;; ++m) {
      if (m >= n.min && run(s, i, pos + m, k)) return true;
      if (m >= cap || !single_ok(n, t_[pos + m])) return false;
    }
  }

  const Program& p_;
  const std::vector<uint32_t>& t_;
  size_t begin_, end_, start_;
  bool not_empty_;
};

}  // namespace

Regex::Regex(std::string_view pattern) : prog_(std::make_unique<Program>()) {
  prog_->top = Parser(pattern, *prog_).parse();
}
Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

size_t Regex::match_at(const std::vector<uint32_t>& text, size_t begin, size_t end, size_t pos,
                       bool not_empty) const {
  Matcher m(*prog_, text, begin, end, pos, not_empty);
  return m.run(prog_->top, 0, pos, nullptr) ? m.result : npos;
}

std::vector<size_t> split_by_patterns(const std::vector<uint32_t>& text,
                                      const std::vector<Regex>& patterns) {
  std::vector<size_t> pieces{text.size()}, next;
  if (text.empty()) return {};
  for (const Regex& re : patterns) {
    next.clear();
    size_t b = 0;
    for (const size_t len : pieces) {
      const size_t e = b + len;
      size_t gap = b;  // start of the stretch no match has covered yet
      auto cut = [&](size_t from, size_t to) {
        if (to > from) next.push_back(to - from);
      };
      // As std::regex_iterator walks: after an empty match, try a non-empty one at the same
      // place before moving on.
      for (size_t pos = b; pos < e;) {
        size_t m = re.match_at(text, b, e, pos);
        if (m == pos) {
          cut(gap, pos);
          gap = pos;
          m = re.match_at(text, b, e, pos, true);
          if (m == Regex::npos) {
            ++pos;
            continue;
          }
        }
        if (m == Regex::npos) {
          ++pos;
          continue;
        }
        cut(gap, pos);
        cut(pos, m);
        gap = pos = m;
      }
      cut(gap, e);
      b = e;
    }
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace sy::text::detail
