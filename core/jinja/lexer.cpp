#include "jinja/lexer.h"

#include <cstring>

#include "jinja/error.h"
#include "jinja/utf8.h"

namespace sy::jinja {
namespace {

bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool name_start(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python's unicode-escape decoding of a literal's body (Jinja2 decodes string literals so).
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    auto code = [&](size_t digits) {
      uint32_t v = 0;
      size_t k = 0;
      for (; k < digits && i + 1 + k < s.size() && hex(s[i + 1 + k]) >= 0; ++k)
        v = v * 16 + static_cast<uint32_t>(hex(s[i + 1 + k]));
      if (k < digits) {
        out += '\\';
        out += c;
        return;
      }
      i += digits;
      append_utf8(out, v);
    };
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'a':
        out += '\a';
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case '\n':
        break;
      case 'x':
        code(2);
        break;
      case 'u':
        code(4);
        break;
      case 'U':
        code(8);
        break;
      default:
        if (c >= '0' && c <= '7') {
          uint32_t v = 0;
          size_t k = 0;
          for (; k < 3 && i + k < s.size() && s[i + k] >= '0' && s[i + k] <= '7'; ++k)
            v = v * 8 + static_cast<uint32_t>(s[i + k] - '0');
          i += k - 1;
          append_utf8(out, v);
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      size_t p = src_.find('{', pos_);
      while (p != std::string_view::npos && p + 1 < src_.size() && !strchr("{%#", src_[p + 1]))
        p = src_.find('{', p + 1);
      if (p == std::string_view::npos || p + 1 >= src_.size()) {
        text(src_.substr(pos_), false);
        break;
      }
      const char kind = src_[p + 1];
      const char mod = p + 2 < src_.size() ? src_[p + 2] : '\0';
      std::string_view t = src_.substr(pos_, p - pos_);
      if (mod == '-') {
        while (!t.empty() && space(t.back())) t.remove_suffix(1);
      } else if (kind != '{' && mod != '+') {
        const size_t l = t.rfind('\n') + 1;  // npos + 1 == 0
        if ((l > 0 || line_starting_) && t.find_first_not_of(" \t", l) == std::string_view::npos)
          t = t.substr(0, l);
      }
      text(t, true);
      count_lines(pos_, p);
      pos_ = p + 2 + (mod == '-' || mod == '+' ? 1 : 0);
      if (kind == '#') {
        comment();
      } else if (kind == '%' && raw()) {
      } else {
        tag(kind == '{');
      }
    }
    out_.push_back({Tok::eof, "", line_});
    return std::move(out_);
  }

 private:
  void text(std::string_view t, bool) {
    if (!t.empty()) out_.push_back({Tok::text, std::string(t), line_});
    line_starting_ = false;
  }

  void count_lines(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) line_ += src_[i] == '\n';
  }

  // After a tag's closing delimiter at pos_ (already past it): '-' strips all following
  // whitespace; a block or comment without '+' drops one newline (trim_blocks).
  void after_end(char mod, bool block) {
    const size_t from = pos_;
    if (mod == '-') {
      while (pos_ < src_.size() && space(src_[pos_])) ++pos_;
    } else if (block && mod != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
    count_lines(from, pos_);
    line_starting_ = pos_ > from && src_[pos_ - 1] == '\n';
  }

  void comment() {
    const int start = line_;
    const size_t e = src_.find("#}", pos_);
    if (e == std::string_view::npos) throw Error(start, "unterminated comment");
    const char mod = e > pos_ && (src_[e - 1] == '-' || src_[e - 1] == '+') ? src_[e - 1] : '\0';
    count_lines(pos_, e + 2);
    pos_ = e + 2;
    after_end(mod, true);
  }

  // {% raw %}...{% endraw %}: the body is text, as written.
  bool raw() {
    size_t i = pos_;
    while (i < src_.size() && space(src_[i])) ++i;
    if (src_.substr(i, 3) != "raw") return false;
    i += 3;
    while (i < src_.size() && space(src_[i])) ++i;
    char mod = '\0';
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) mod = src_[i++];
    if (src_.substr(i, 2) != "%}") return false;
    const int start = line_;
    count_lines(pos_, i + 2);
    pos_ = i + 2;
    after_end(mod, true);
    for (size_t s = src_.find("{%", pos_); s != std::string_view::npos;
         s = src_.find("{%", s + 2)) {
      size_t j = s + 2;
      const char open = j < src_.size() && (src_[j] == '-' || src_[j] == '+') ? src_[j++] : '\0';
      while (j < src_.size() && space(src_[j])) ++j;
      if (src_.substr(j, 6) != "endraw") continue;
      j += 6;
      while (j < src_.size() && space(src_[j])) ++j;
      char close = '\0';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) close = src_[j++];
      if (src_.substr(j, 2) != "%}") continue;
      std::string_view body = src_.substr(pos_, s - pos_);
      if (open == '-')
        while (!body.empty() && space(body.back())) body.remove_suffix(1);
      text(body, false);
      count_lines(pos_, j + 2);
      pos_ = j + 2;
      after_end(close, true);
      return true;
    }
    throw Error(start, "unterminated raw block (no {% endraw %})");
  }

  void tag(bool var) {
    const int start = line_;
    out_.push_back({var ? Tok::var_begin : Tok::block_begin, "", line_});
    int depth = 0;
    for (;;) {
      while (pos_ < src_.size() && space(src_[pos_])) line_ += src_[pos_++] == '\n';
      if (pos_ >= src_.size())
        throw Error(start,
                    var ? "unterminated expression (no '}}')" : "unterminated tag (no '%}')");
      const std::string_view rest = src_.substr(pos_);
      const char close = var ? '}' : '%';
      if (depth == 0) {
        char mod = '\0';
        size_t n = 0;
        if ((rest[0] == '-' || (!var && rest[0] == '+')) && rest.size() > 2 && rest[1] == close &&
            rest[2] == '}') {
          mod = rest[0];
          n = 3;
        } else if (rest.size() > 1 && rest[0] == close && rest[1] == '}') {
          n = 2;
        }
        if (n > 0) {
          out_.push_back({var ? Tok::var_end : Tok::block_end, "", line_});
          pos_ += n;
          after_end(mod, !var);
          return;
        }
      }
      const char c = rest[0];
      if (name_start(c)) {
        size_t n = 1;
        while (n < rest.size() && name_char(rest[n])) ++n;
        out_.push_back({Tok::name, std::string(rest.substr(0, n)), line_});
        pos_ += n;
      } else if (digit(c)) {
        number(rest);
      } else if (c == '\'' || c == '"') {
        string(rest);
      } else {
        static const char* const kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*",
                                           "/",  "%",  "~",  "<",  ">",  "=",  "(", ")", "[",
                                           "]",  "{",  "}",  ",",  ".",  ":",  "|"};
        const char* op = nullptr;
        for (const char* o : kOps)
          if (rest.substr(0, strlen(o)) == o) {
            op = o;
            break;
          }
        if (!op) throw Error(line_, std::string("unexpected character '") + c + "'");
        if (strchr("([{", op[0]) && op[1] == '\0') ++depth;
        if (strchr(")]}", op[0]) && op[1] == '\0' && depth > 0) --depth;
        out_.push_back({Tok::op, op, line_});
        pos_ += strlen(op);
      }
    }
  }

  void number(std::string_view rest) {
    size_t n = 0;
    std::string digits;
    auto run = [&] {
      while (n < rest.size() && (digit(rest[n]) || (rest[n] == '_' && n + 1 < rest.size() &&
                                                    digit(rest[n + 1]) && n > 0))) {
        if (rest[n] != '_') digits += rest[n];
        ++n;
      }
    };
    run();
    bool real = false;
    if (n + 1 < rest.size() && rest[n] == '.' && digit(rest[n + 1])) {
      digits += rest[n++];
      run();
      real = true;
    }
    if (n < rest.size() && (rest[n] == 'e' || rest[n] == 'E')) {
      size_t m = n + 1;
      if (m < rest.size() && (rest[m] == '+' || rest[m] == '-')) ++m;
      if (m < rest.size() && digit(rest[m])) {
        digits += 'e';
        digits.append(rest.substr(n + 1, m - n - 1));
        n = m;
        run();
        real = true;
      }
    }
    out_.push_back({real ? Tok::real : Tok::integer, digits, line_});
    pos_ += n;
  }

  void string(std::string_view rest) {
    const char q = rest[0];
    size_t n = 1;
    while (n < rest.size() && rest[n] != q) n += rest[n] == '\\' ? 2 : 1;
    if (n >= rest.size()) throw Error(line_, "unterminated string literal");
    out_.push_back({Tok::string, unescape(rest.substr(1, n - 1)), line_});
    count_lines(pos_, pos_ + n + 1);
    pos_ += n + 1;
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> lex(std::string_view source) {
  // Jinja2 reads \r\n and \r as \n.
  std::string s;
  if (source.find('\r') != std::string_view::npos) {
    s.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        s += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        s += source[i];
      }
    }
    source = s;
  }
  if (!source.empty() && source.back() == '\n')
    source.remove_suffix(1);  // keep_trailing_newline=False
  return Lexer(source).run();
}

}  // namespace sy::jinja
