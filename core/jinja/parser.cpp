#include "jinja/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "jinja/error.h"
#include "jinja/lexer.h"

namespace sy::jinja {
namespace {

ExprPtr node(ExprKind kind, int line, std::string name = {}) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  e->name = std::move(name);
  return e;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, int max_depth) : t_(std::move(tokens)), max_depth_(max_depth) {}

  Body run() {
    std::string end;
    Body b = body({}, end);
    return b;
  }

 private:
  // Guards the recursion: a template nests statements and expressions at most max_depth deep.
  struct Depth {
    explicit Depth(Parser& p) : p(p) {
      if (++p.depth_ > p.max_depth_)
        throw Error(p.cur().line, "nesting deeper than " + std::to_string(p.max_depth_));
    }
    ~Depth() { --p.depth_; }
    Parser& p;
  };

  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  bool at_op(std::string_view op) const { return cur().type == Tok::op && cur().value == op; }
  bool at_name(std::string_view n) const { return cur().type == Tok::name && cur().value == n; }
  bool skip_op(std::string_view op) {
    if (!at_op(op)) return false;
    ++i_;
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!at_name(n)) return false;
    ++i_;
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const {
    std::string got;
    switch (cur().type) {
      case Tok::eof:
        got = "end of template";
        break;
      case Tok::block_end:
        got = "end of tag";
        break;
      case Tok::var_end:
        got = "end of expression";
        break;
      case Tok::text:
        got = "text";
        break;
      default:
        got = "'" + cur().value + "'";
    }
    throw Error(cur().line, what + ", got " + got);
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail("expected '" + std::string(op) + "'");
  }
  std::string expect_name() {
    if (cur().type != Tok::name) fail("expected a name");
    return t_[i_++].value;
  }
  void expect_block_end() {
    if (cur().type != Tok::block_end) fail("expected end of tag");
    ++i_;
  }

  // Statements until one of the end tags; `end` gets the tag that ended the body ("" at the end
  // of the template, allowed only when ends is empty). The end tag's name is consumed, the rest
  // of its tag is not.
  Body body(std::initializer_list<std::string_view> ends, std::string& end) {
    Depth d(*this);
    Body out;
    for (;;) {
      const Token& tk = cur();
      if (tk.type == Tok::eof) {
        if (ends.size() == 0) return out;
        std::string names;
        for (auto e : ends) names += (names.empty() ? "" : " or ") + std::string(e);
        throw Error(tk.line, "unexpected end of template, expected " + names);
      }
      if (tk.type == Tok::text) {
        auto s = stmt(StmtKind::text, tk.line);
        s->text = tk.value;
        out.push_back(std::move(s));
        ++i_;
      } else if (tk.type == Tok::var_begin) {
        ++i_;
        auto s = stmt(StmtKind::print, tk.line);
        s->exprs.push_back(tuple_or_expr());
        if (cur().type != Tok::var_end) fail("expected end of expression");
        ++i_;
        out.push_back(std::move(s));
      } else if (tk.type == Tok::block_begin) {
        ++i_;
        if (cur().type != Tok::name) fail("expected a tag name");
        const std::string name = cur().value;
        for (auto e : ends)
          if (name == e) {
            ++i_;
            end = name;
            return out;
          }
        ++i_;
        if (auto s = tag(name, tk.line)) out.push_back(std::move(s));
      } else {
        fail("unexpected token");
      }
    }
  }

  static std::unique_ptr<Stmt> stmt(StmtKind k, int line) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->line = line;
    return s;
  }

  std::unique_ptr<Stmt> tag(const std::string& name, int line) {
    std::string end;
    if (name == "if") {
      auto s = stmt(StmtKind::branch, line);
      s->exprs.push_back(expr());
      expect_block_end();
      for (;;) {
        s->bodies.push_back(body({"elif", "else", "endif"}, end));
        if (end == "elif") {
          s->exprs.push_back(expr());
          expect_block_end();
        } else if (end == "else") {
          expect_block_end();
          s->bodies.push_back(body({"endif"}, end));
          expect_block_end();
          return s;
        } else {
          expect_block_end();
          return s;
        }
      }
    }
    if (name == "for") {
      auto s = stmt(StmtKind::loop, line);
      s->names = targets();
      if (!skip_name("in")) fail("expected 'in'");
      s->exprs.push_back(tuple_or_expr(/*with_cond=*/false));
      s->exprs.push_back(skip_name("if") ? expr() : nullptr);
      if (at_name("recursive")) fail("recursive loops are not supported");
      expect_block_end();
      ++loops_;
      s->bodies.push_back(body({"else", "endfor"}, end));
      --loops_;
      expect_block_end();
      if (end == "else") {
        s->bodies.push_back(body({"endfor"}, end));
        expect_block_end();
      } else {
        s->bodies.emplace_back();
      }
      return s;
    }
    if (name == "set") {
      if (cur().type == Tok::name && peek().type == Tok::op && peek().value == ".") {
        auto s = stmt(StmtKind::set, line);
        s->attribute = true;
        s->names.push_back(expect_name());
        ++i_;
        s->names.push_back(expect_name());
        expect_op("=");
        s->exprs.push_back(tuple_or_expr());
        expect_block_end();
        return s;
      }
      std::vector<std::string> names = targets();
      if (skip_op("=")) {
        auto s = stmt(StmtKind::set, line);
        s->names = std::move(names);
        s->exprs.push_back(tuple_or_expr());
        expect_block_end();
        return s;
      }
      if (names.size() != 1) fail("expected '='");
      auto s = stmt(StmtKind::set_block, line);
      s->names = std::move(names);
      if (at_op("|")) s->exprs.push_back(filters(nullptr));
      expect_block_end();
      s->bodies.push_back(body({"endset"}, end));
      expect_block_end();
      return s;
    }
    if (name == "macro") {
      auto s = stmt(StmtKind::macro, line);
      s->names.push_back(expect_name());
      params(*s);
      expect_block_end();
      const int loops = loops_;
      loops_ = 0;
      s->bodies.push_back(body({"endmacro"}, end));
      loops_ = loops;
      s->varargs = reads(s->bodies[0], "varargs");
      s->kwargs = reads(s->bodies[0], "kwargs");
      if (cur().type == Tok::name) ++i_;  // {% endmacro name %}
      expect_block_end();
      return s;
    }
    if (name == "call") {
      auto s = stmt(StmtKind::call_block, line);
      if (at_op("(")) params(*s);
      ExprPtr call = expr();
      if (call->kind != ExprKind::call) throw Error(line, "expected a call after 'call'");
      s->exprs.push_back(std::move(call));
      expect_block_end();
      s->bodies.push_back(body({"endcall"}, end));
      expect_block_end();
      s->varargs = reads(s->bodies[0], "varargs");
      s->kwargs = reads(s->bodies[0], "kwargs");
      return s;
    }
    if (name == "filter") {
      auto s = stmt(StmtKind::filter_block, line);
      s->exprs.push_back(filter_chain_after_name());
      expect_block_end();
      s->bodies.push_back(body({"endfilter"}, end));
      expect_block_end();
      return s;
    }
    if (name == "with") {
      auto s = stmt(StmtKind::scope, line);
      while (cur().type != Tok::block_end) {
        if (!s->names.empty()) expect_op(",");
        s->names.push_back(expect_name());
        expect_op("=");
        s->exprs.push_back(expr());
      }
      expect_block_end();
      s->bodies.push_back(body({"endwith"}, end));
      expect_block_end();
      return s;
    }
    if (name == "break" || name == "continue") {
      if (loops_ == 0) throw Error(line, "'" + name + "' outside a loop");
      expect_block_end();
      return stmt(name == "break" ? StmtKind::loop_break : StmtKind::loop_continue, line);
    }
    if (name == "generation") {  // transformers' assistant-mask marker: renders its body
      expect_block_end();
      auto s = stmt(StmtKind::branch, line);
      s->exprs.push_back(literal(Value(true)));
      s->bodies.push_back(body({"endgeneration"}, end));
      expect_block_end();
      return s;
    }
    throw Error(line, "unknown tag '" + name + "'");
  }

  void params(Stmt& s) {
    expect_op("(");
    comma_list(")", [&] {
      s.names.push_back(expect_name());
      s.defaults.push_back(skip_op("=") ? expr() : nullptr);
    });
  }

  // for/set targets: a name, or names separated by commas (optionally in parentheses).
  std::vector<std::string> targets() {
    std::vector<std::string> names;
    const bool paren = skip_op("(");
    do {
      if (paren && at_op(")")) break;
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    return names;
  }

  // "{% filter upper|trim %}": the filter names after the tag, as a chain with no operand.
  ExprPtr filter_chain_after_name() {
    ExprPtr e;
    do {
      e = filter(std::move(e));
    } while (skip_op("|"));
    return e;
  }

  ExprPtr tuple_or_expr(bool with_cond = true) {
    const int line = cur().line;
    ExprPtr first = with_cond ? expr() : or_expr();
    if (!at_op(",")) return first;
    auto t = node(ExprKind::tuple, line);
    t->kids.push_back(std::move(first));
    while (skip_op(",")) {
      if (cur().type == Tok::block_end || cur().type == Tok::var_end || at_op(")")) break;
      t->kids.push_back(with_cond ? expr() : or_expr());
    }
    return t;
  }

  ExprPtr expr() {
    Depth d(*this);
    ExprPtr e = or_expr();
    while (at_name("if")) {
      const int line = cur().line;
      ++i_;
      auto c = node(ExprKind::cond, line);
      ExprPtr test = or_expr();
      ExprPtr other = skip_name("else") ? expr() : nullptr;
      c->kids.push_back(std::move(e));
      c->kids.push_back(std::move(test));
      c->kids.push_back(std::move(other));
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(std::string op, ExprPtr l, ExprPtr r, int line) {
    auto b = node(ExprKind::binary, line, std::move(op));
    b->kids.push_back(std::move(l));
    b->kids.push_back(std::move(r));
    return b;
  }

  // One left-associative level of binary operators (Jinja2 parses ** so too); `next` parses the
  // operands, the next level up.
  ExprPtr left(ExprPtr (Parser::*next)(), std::initializer_list<std::string_view> ops) {
    ExprPtr e = (this->*next)();
    for (;;) {
      const Token& tk = cur();
      const bool word = tk.type == Tok::op || tk.type == Tok::name;
      const auto op = std::find(ops.begin(), ops.end(), tk.value);
      if (!word || op == ops.end()) return e;
      ++i_;
      e = binary(std::string(*op), std::move(e), (this->*next)(), tk.line);
    }
  }

  ExprPtr or_expr() { return left(&Parser::and_expr, {"or"}); }
  ExprPtr and_expr() { return left(&Parser::not_expr, {"and"}); }

  ExprPtr not_expr() {
    if (at_name("not")) {
      Depth d(*this);
      auto u = node(ExprKind::unary, cur().line, "not");
      ++i_;
      u->kids.push_back(not_expr());
      return u;
    }
    return compare();
  }

  ExprPtr compare() {
    ExprPtr first = math1();
    ExprPtr e;
    for (;;) {
      const int line = cur().line;
      std::string op;
      if (cur().type == Tok::op &&
          (cur().value == "==" || cur().value == "!=" || cur().value == "<" || cur().value == ">" ||
           cur().value == "<=" || cur().value == ">=")) {
        op = t_[i_++].value;
      } else if (at_name("in")) {
        ++i_;
        op = "in";
      } else if (at_name("not") && peek().type == Tok::name && peek().value == "in") {
        i_ += 2;
        op = "not in";
      } else {
        return e ? std::move(e) : std::move(first);
      }
      if (!e) {
        e = node(ExprKind::compare, line);
        e->kids.push_back(std::move(first));
      }
      e->ops.push_back(op);
      e->kids.push_back(math1());
    }
  }

  ExprPtr math1() { return left(&Parser::concat, {"+", "-"}); }
  ExprPtr concat() { return left(&Parser::math2, {"~"}); }
  ExprPtr math2() { return left(&Parser::pow, {"*", "/", "//", "%"}); }
  ExprPtr pow() { return left(&Parser::operand, {"**"}); }
  ExprPtr operand() { return unary(true); }

  ExprPtr unary(bool with_filter) {
    Depth d(*this);
    ExprPtr e;
    if (at_op("-") || at_op("+")) {
      e = node(ExprKind::unary, cur().line, t_[i_++].value);
      e->kids.push_back(unary(false));
    } else {
      e = primary();
    }
    e = postfix(std::move(e));
    if (with_filter) e = filters(std::move(e));
    return e;
  }

  // |filter, is test and calls after an operand, left to right.
  ExprPtr filters(ExprPtr e) {
    for (;;) {
      if (skip_op("|")) {
        e = filter(std::move(e));
      } else if (at_name("is")) {
        e = test(std::move(e));
      } else if (at_op("(")) {
        e = call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr filter(ExprPtr operand) {
    const int line = cur().line;
    std::string name = expect_name();
    while (skip_op(".")) name += "." + expect_name();
    auto f = node(ExprKind::filter, line, name);
    f->kids.push_back(std::move(operand));
    if (at_op("(")) args(f->args);
    return f;
  }

  ExprPtr test(ExprPtr operand) {
    const int line = cur().line;
    ++i_;  // is
    const bool negated = skip_name("not");
    const std::string name = expect_name();
    auto t = node(ExprKind::test, line, name);
    t->negated = negated;
    t->kids.push_back(std::move(operand));
    if (at_op("(")) {
      args(t->args);
    } else if ((cur().type == Tok::name || cur().type == Tok::string ||
                cur().type == Tok::integer || cur().type == Tok::real || at_op("[") || at_op("{") ||
                at_op("-")) &&
               !(cur().type == Tok::name &&
                 (cur().value == "else" || cur().value == "or" || cur().value == "and" ||
                  cur().value == "if" || cur().value == "in" || cur().value == "not" ||
                  cur().value == "is"))) {
      ExprPtr arg = unary(false);
      t->args.positional.push_back(std::move(arg));
    }
    return t;
  }

  ExprPtr call(ExprPtr callee) {
    auto c = node(ExprKind::call, cur().line);
    c->kids.push_back(std::move(callee));
    args(c->args);
    return c;
  }

  void args(Args& a) {
    expect_op("(");
    comma_list(")", [&] {
      if (cur().type == Tok::name && peek().type == Tok::op && peek().value == "=") {
        std::string k = t_[i_].value;
        i_ += 2;
        a.keyword.emplace_back(std::move(k), expr());
      } else {
        if (!a.keyword.empty()) fail("positional argument after a keyword argument");
        a.positional.push_back(expr());
      }
    });
  }

  // Items separated by commas up to `close` (a trailing comma allowed), each read by `item`;
  // the opening bracket is already read.
  template <class Item>
  void comma_list(std::string_view close, Item item) {
    for (bool first = true; !skip_op(close); first = false) {
      if (!first) {
        expect_op(",");
        if (skip_op(close)) break;
      }
      item();
    }
  }

  ExprPtr postfix(ExprPtr e) {
    for (;;) {
      const int line = cur().line;
      if (skip_op(".")) {
        if (cur().type == Tok::integer) {  // xs.0 is xs[0]
          // (from_chars: stoll throws out_of_range, not Error, on too many digits)
          const std::string& digits = t_[i_++].value;
          int64_t v = 0;
          if (std::from_chars(digits.data(), digits.data() + digits.size(), v).ec != std::errc())
            throw Error(line, "integer literal out of range: " + digits);
          auto it = node(ExprKind::item, line);
          it->kids.push_back(std::move(e));
          it->kids.push_back(literal(Value(v)));
          e = std::move(it);
          continue;
        }
        auto a = node(ExprKind::attr, line, expect_name());
        a->kids.push_back(std::move(e));
        e = std::move(a);
      } else if (skip_op("[")) {
        e = subscript(std::move(e), line);
      } else if (at_op("(")) {
        e = call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr subscript(ExprPtr obj, int line) {
    ExprPtr parts[3];
    int n = 0;
    bool slice = false;
    for (;;) {
      if (at_op("]")) break;
      if (at_op(":")) {
        ++i_;
        slice = true;
        if (++n > 2) fail("expected ']'");
        continue;
      }
      if (parts[n]) fail("expected ':' or ']'");
      parts[n] = expr();
    }
    expect_op("]");
    if (!slice) {
      if (!parts[0]) fail("expected an index");
      auto it = node(ExprKind::item, line);
      it->kids.push_back(std::move(obj));
      it->kids.push_back(std::move(parts[0]));
      return it;
    }
    auto s = node(ExprKind::slice, line);
    s->kids.push_back(std::move(obj));
    for (auto& p : parts) s->kids.push_back(std::move(p));
    return s;
  }

  ExprPtr literal(Value v) {
    auto e = node(ExprKind::literal, cur().line);
    e->value = std::move(v);
    return e;
  }

  ExprPtr primary() {
    Depth d(*this);
    const Token& tk = cur();
    const int line = tk.line;
    switch (tk.type) {
      case Tok::name: {
        ++i_;
        if (tk.value == "true" || tk.value == "True") return literal(Value(true));
        if (tk.value == "false" || tk.value == "False") return literal(Value(false));
        if (tk.value == "none" || tk.value == "None") return literal(Value::none());
        return node(ExprKind::name, line, tk.value);
      }
      case Tok::string: {
        std::string s;
        while (cur().type == Tok::string) s += t_[i_++].value;  // "a" "b" is "ab"
        return literal(Value(std::move(s)));
      }
      case Tok::integer: {
        int64_t v = 0;
        const auto r = std::from_chars(tk.value.data(), tk.value.data() + tk.value.size(), v);
        if (r.ec != std::errc()) throw Error(line, "integer literal out of range: " + tk.value);
        ++i_;
        return literal(Value(v));
      }
      case Tok::real: {
        ++i_;
        return literal(Value(std::strtod(tk.value.c_str(), nullptr)));
      }
      case Tok::op:
        if (tk.value == "(") {
          ++i_;
          if (skip_op(")")) return node(ExprKind::tuple, line);
          ExprPtr e = tuple_or_expr();
          expect_op(")");
          return e;
        }
        if (tk.value == "[") {
          ++i_;
          auto l = node(ExprKind::list, line);
          comma_list("]", [&] { l->kids.push_back(expr()); });
          return l;
        }
        if (tk.value == "{") {
          ++i_;
          auto m = node(ExprKind::dict, line);
          comma_list("}", [&] {
            m->kids.push_back(expr());
            expect_op(":");
            m->kids.push_back(expr());
          });
          return m;
        }
        break;
      default:
        break;
    }
    fail("expected an expression");
  }

  // Whether the body reads the variable (a macro's varargs and kwargs exist only then).
  static bool reads(const Expr& e, std::string_view var) {
    if (e.kind == ExprKind::name && e.name == var) return true;
    for (const auto& k : e.kids)
      if (k && reads(*k, var)) return true;
    for (const auto& k : e.args.positional)
      if (reads(*k, var)) return true;
    for (const auto& kv : e.args.keyword)
      if (reads(*kv.second, var)) return true;
    return false;
  }
  static bool reads(const Body& b, std::string_view var) {
    for (const auto& s : b) {
      for (const auto& e : s->exprs)
        if (e && reads(*e, var)) return true;
      for (const auto& e : s->defaults)
        if (e && reads(*e, var)) return true;
      for (const auto& body : s->bodies)
        if (reads(body, var)) return true;
    }
    return false;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loops_ = 0;
  int max_depth_;
};

}  // namespace

Body parse(std::string_view source, int max_depth) {
  return Parser(lex(source), max_depth).run();
}

}  // namespace sy::jinja
