#include "jinja/interpreter.h"

#include <cmath>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/strings.h"
#include "jinja/utf8.h"

namespace sy::jinja {
namespace {

[[noreturn]] void undefined_error(const Expr& e) {
  throw Error(e.line, "'" + describe(e) + "' is undefined");
}

// Python's slice.indices: the start, stop and step over a sequence of n.
void slice_bounds(int64_t n, const Value& a, const Value& b, const Value& c, int64_t& start,
                  int64_t& stop, int64_t& step) {
  step = c.is_number() ? c.integer() : 1;
  if (step == 0) throw Error(0, "slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t def) {
    if (!v.is_number()) return def;
    int64_t x = v.integer();
    if (x < 0) x += n;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  start = clamp(a, step > 0 ? 0 : n - 1);
  stop = clamp(b, step > 0 ? n : -1);
}

std::vector<int64_t> slice_indices(int64_t n, const Value& a, const Value& b, const Value& c) {
  int64_t start, stop, step;
  slice_bounds(n, a, b, c, start, stop, step);
  std::vector<int64_t> at;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) at.push_back(i);
  return at;
}

bool overflows(int64_t a, int64_t b, char op, int64_t& r) {
  switch (op) {
    case '+':
      return __builtin_add_overflow(a, b, &r);
    case '-':
      return __builtin_sub_overflow(a, b, &r);
    default:
      return __builtin_mul_overflow(a, b, &r);
  }
}

// Keeps a weak reference, dropping the expired ones before the list grows, so it stays bounded
// by what is alive.
template <typename T>
void remember(std::vector<std::weak_ptr<T>>& v, const std::shared_ptr<T>& p) {
  if (!v.empty() && v.back().lock() == p) return;
  if (v.size() == v.capacity())
    std::erase_if(v, [](const std::weak_ptr<T>& w) { return w.expired(); });
  v.emplace_back(p);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::string describe(const Expr& e) {
  switch (e.kind) {
    case ExprKind::name:
      return e.name;
    case ExprKind::attr:
      return describe(*e.kids[0]) + "." + e.name;
    case ExprKind::item:
      return describe(*e.kids[0]) + "[" + describe(*e.kids[1]) + "]";
    case ExprKind::literal:
      return e.value.is(Kind::string) ? "'" + e.value.str() + "'" : to_text(e.value).bytes;
    case ExprKind::call:
      return describe(*e.kids[0]) + "(...)";
    default:
      return "expression";
  }
}

Interpreter::Interpreter(const Limits& limits, std::shared_ptr<Frame> globals)
    : limits_(limits), frame_(std::make_shared<Frame>()) {
  frame_->parent = std::move(globals);
}

Interpreter::~Interpreter() {
  for (const auto& w : spaces_)
    if (const auto o = w.lock()) {
      o->entries.clear();
      o->keys.clear();
    }
  for (const auto& w : closures_)
    if (const auto f = w.lock()) f->vars.clear();
}

std::shared_ptr<Frame> Interpreter::inner() const {
  auto f = std::make_shared<Frame>();
  f->parent = frame_;
  return f;
}

Text Interpreter::render(const Body& body) {
  try {
    return capture(body);
  } catch (const Error& e) {
    if (e.line() > 0) throw;
    throw Error(line_, e.what());
  }
}

void Interpreter::check_size(size_t n) const {
  if (n > limits_.max_output)
    throw Error(0, "the render grew past " + std::to_string(limits_.max_output) + " bytes");
}

void Interpreter::step() {
  if (++steps_ > limits_.max_steps)
    throw Error(line_, "the render ran past " + std::to_string(limits_.max_steps) + " steps");
}

const Value& Interpreter::charge(const Value& v) {
  steps_ += v.weight();
  if (steps_ > limits_.max_steps)
    throw Error(line_, "the render ran past " + std::to_string(limits_.max_steps) + " steps");
  return v;
}

void Interpreter::emit(const Text& t) {
  check_size(out_->bytes.size() + t.bytes.size());
  steps_ += t.bytes.size() / 64;
  out_->append(t);
}

Text Interpreter::capture(const Body& b) {
  Text t;
  Text* saved = out_;
  out_ = &t;
  try {
    exec(b);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return t;
}

Value Interpreter::lookup(const std::string& name) const {
  for (const Frame* f = frame_.get(); f; f = f->parent.get()) {
    auto it = f->vars.find(name);
    if (it != f->vars.end()) return it->second;
  }
  return builtin_global(name);
}

Interpreter::Flow Interpreter::exec(const Body& b) {
  for (const auto& s : b) {
    const Flow f = exec(*s);
    if (f != Flow::normal) return f;
  }
  return Flow::normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& s) {
  line_ = s.line;
  step();
  switch (s.kind) {
    case StmtKind::text:
      emit(Text(s.text));
      break;
    case StmtKind::print:
      emit(to_text(eval(*s.exprs[0]), limits_.max_output));
      break;
    case StmtKind::branch:
      for (size_t i = 0; i < s.exprs.size(); ++i)
        if (eval(*s.exprs[i]).truthy()) return exec(s.bodies[i]);
      if (s.bodies.size() > s.exprs.size()) return exec(s.bodies.back());
      break;
    case StmtKind::loop:
      return loop(s);
    case StmtKind::set: {
      Value v = eval(*s.exprs[0]);
      if (s.attribute) {
        Value ns = lookup(s.names[0]);
        if (!ns.is(Kind::space))
          throw Error(s.line,
                      "cannot assign attribute on non-namespace object '" + s.names[0] + "'");
        remember(spaces_, ns.object_ptr());
        ns.object().set(s.names[1], std::move(v));
      } else if (s.names.size() == 1) {
        frame_->vars[s.names[0]] = std::move(v);
      } else {
        if (!v.is(Kind::list) || v.items().size() != s.names.size())
          throw Error(s.line, "cannot unpack into " + std::to_string(s.names.size()) + " names");
        for (size_t i = 0; i < s.names.size(); ++i) frame_->vars[s.names[i]] = v.items()[i];
      }
      break;
    }
    case StmtKind::set_block: {
      Value v(capture(s.bodies[0]));
      if (!s.exprs.empty()) v = chain(*s.exprs[0], v);
      frame_->vars[s.names[0]] = std::move(v);
      break;
    }
    case StmtKind::macro:
      frame_->vars[s.names[0]] = macro_value(s, 1);
      break;
    case StmtKind::call_block: {
      const Value caller = macro_value(s, 0);
      emit(to_text(call(*s.exprs[0], &caller), limits_.max_output));
      break;
    }
    case StmtKind::filter_block:
      emit(to_text(chain(*s.exprs[0], Value(capture(s.bodies[0])))));
      break;
    case StmtKind::scope: {
      auto f = inner();
      for (size_t i = 0; i < s.names.size(); ++i) f->vars[s.names[i]] = eval(*s.exprs[i]);
      const Scope scope(*this, std::move(f));
      return exec(s.bodies[0]);
    }
    case StmtKind::loop_break:
      return Flow::stop;
    case StmtKind::loop_continue:
      return Flow::skip;
  }
  return Flow::normal;
}

Interpreter::Flow Interpreter::loop(const Stmt& s) {
  const Value seq = eval(*s.exprs[0]);
  List items;
  switch (seq.kind()) {
    case Kind::undefined:
      break;
    case Kind::list:
      items = seq.items();
      break;
    case Kind::dict:
    case Kind::space:
      for (size_t i = 0; i < seq.object().entries.size(); ++i) items.push_back(seq.object().key(i));
      break;
    case Kind::string: {
      const auto at = code_point_offsets(seq.str());
      for (size_t i = 0; i + 1 < at.size(); ++i)
        items.emplace_back(seq.text().sub(at[i], at[i + 1] - at[i]));
      break;
    }
    default:
      throw Error(s.line, "'" + std::string(seq.type_name()) + "' object is not iterable");
  }
  auto bind = [&](Frame& f, const Value& v) {
    if (s.names.size() == 1) {
      f.vars[s.names[0]] = v;
      return;
    }
    if (!v.is(Kind::list) || v.items().size() != s.names.size())
      throw Error(s.line, "cannot unpack into " + std::to_string(s.names.size()) + " names");
    for (size_t i = 0; i < s.names.size(); ++i) f.vars[s.names[i]] = v.items()[i];
  };
  if (s.exprs[1]) {  // for x in xs if cond: the filter runs first, loop.length counts what passes
    List kept;
    for (const Value& v : items) {
      auto f = inner();
      bind(*f, v);
      const Scope scope(*this, std::move(f));
      if (eval(*s.exprs[1]).truthy()) kept.push_back(v);
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec(s.bodies[1]);
  const auto n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    auto info = std::make_shared<Object>();
    info->set("index", Value(i + 1));
    info->set("index0", Value(i));
    info->set("revindex", Value(n - i));
    info->set("revindex0", Value(n - i - 1));
    info->set("first", Value(i == 0));
    info->set("last", Value(i == n - 1));
    info->set("length", Value(n));
    info->set("depth", Value(int64_t{1}));
    info->set("depth0", Value(int64_t{0}));
    info->set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value());
    info->set("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value());
    info->set("cycle", Value::function("cycle", [i](Call& c) {
                if (c.positional.empty()) throw Error(0, "no items for cycling given");
                return c.positional[static_cast<size_t>(i) % c.positional.size()];
              }));
    auto f = inner();
    bind(*f, items[static_cast<size_t>(i)]);
    f->vars["loop"] = Value::space(std::move(info));
    const Scope scope(*this, std::move(f));
    if (exec(s.bodies[0]) == Flow::stop) break;
  }
  return Flow::normal;
}

Value Interpreter::macro_value(const Stmt& m, size_t first_param) {
  const std::shared_ptr<Frame> closure = frame_;
  remember(closures_, closure);
  const Stmt* stmt = &m;
  return Value::function(first_param ? m.names[0] : "caller",
                         [stmt, first_param, closure](Call& c) {
                           return c.in->call_macro(*stmt, first_param, closure, c);
                         });
}

Value Interpreter::call_macro(const Stmt& m, size_t first_param,
                              const std::shared_ptr<Frame>& closure, Call& c) {
  if (depth_ >= limits_.max_depth)
    throw Error(line_, "macro calls nested deeper than " + std::to_string(limits_.max_depth));
  auto f = std::make_shared<Frame>();
  f->parent = closure;
  const size_t n = m.names.size() - first_param;
  std::vector<bool> bound(n, false);
  List varargs;
  for (size_t i = 0; i < c.positional.size(); ++i) {
    if (i < n) {
      f->vars[m.names[first_param + i]] = c.positional[i];
      bound[i] = true;
    } else if (m.varargs) {
      varargs.push_back(c.positional[i]);
    } else {
      throw Error(line_, "macro '" + (first_param ? m.names[0] : std::string("caller")) +
                             "' takes not more than " + std::to_string(n) + " argument(s)");
    }
  }
  auto kwargs = std::make_shared<Object>();
  for (auto& [k, v] : c.keyword) {
    size_t i = 0;
    while (i < n && m.names[first_param + i] != k) ++i;
    if (i < n) {
      f->vars[k] = v;
      bound[i] = true;
    } else if (k == "caller") {
      f->vars["caller"] = v;
    } else if (m.kwargs) {
      kwargs->set(k, v);
    } else {
      throw Error(line_, "macro '" + (first_param ? m.names[0] : std::string("caller")) +
                             "' takes no keyword argument '" + k + "'");
    }
  }
  f->vars["varargs"] = Value::list(std::move(varargs));
  f->vars["kwargs"] = Value::dict(kwargs);
  const int saved_line = line_;
  const Scope scope(*this, f);
  ++depth_;
  try {
    for (size_t i = 0; i < n; ++i)
      if (!bound[i])
        f->vars[m.names[first_param + i]] = m.defaults[i] ? eval(*m.defaults[i]) : Value();
    Text t = capture(m.bodies[0]);
    --depth_;
    line_ = saved_line;
    return Value(std::move(t));
  } catch (...) {
    --depth_;
    throw;
  }
}

Call Interpreter::arguments(const Args& a, std::string_view name) {
  Call c;
  c.name = name;
  c.in = this;
  c.line = line_;
  for (const auto& p : a.positional) c.positional.push_back(eval(*p));
  for (const auto& [k, v] : a.keyword) c.keyword.emplace_back(k, eval(*v));
  return c;
}

Value Interpreter::call(const Expr& e, const Value* caller) {
  const Expr& callee = *e.kids[0];
  Call c;
  Value fn;
  if (callee.kind == ExprKind::attr) {
    const Value obj = eval(*callee.kids[0]);
    if (obj.is_undefined()) undefined_error(*callee.kids[0]);
    c = arguments(e.args, callee.name);
    if (caller) c.keyword.emplace_back("caller", *caller);
    line_ = e.line;
    if (!obj.is(Kind::space) || !obj.object().find(callee.name)) {
      if (auto r = call_method(obj, callee.name, c)) {
        charge(obj);
        return charge(*r);
      }
    }
    fn = attribute(obj, callee.name, callee);
  } else {
    fn = eval(callee);
    // (a string_view of the name itself: `? callee.name : ""` would view a temporary string)
    c = arguments(e.args, callee.kind == ExprKind::name ? std::string_view(callee.name) : "");
    if (caller) c.keyword.emplace_back("caller", *caller);
  }
  line_ = e.line;
  if (fn.is_undefined()) undefined_error(callee);
  if (!fn.is(Kind::function)) throw Error(e.line, "'" + describe(callee) + "' is not callable");
  return charge(fn.call(c));
}

Value Interpreter::attribute(const Value& obj, const std::string& name, const Expr& at) {
  if (obj.is_undefined()) undefined_error(*at.kids[0]);
  if (obj.is_mapping()) {
    if (const Value* v = obj.object().find(name)) return *v;
  }
  return Value();
}

Value Interpreter::item(const Value& obj, const Value& index, const Expr& at) {
  switch (obj.kind()) {
    case Kind::undefined:
      undefined_error(*at.kids[0]);
    case Kind::list:
      if (index.is_number() && !index.is(Kind::real)) {
        int64_t i = index.integer();
        const auto n = static_cast<int64_t>(obj.items().size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return obj.items()[static_cast<size_t>(i)];
      }
      return Value();
    case Kind::string:
      if (index.is_number() && !index.is(Kind::real)) {
        const auto at_cp = code_point_offsets(obj.str());
        int64_t i = index.integer();
        const auto n = static_cast<int64_t>(at_cp.size()) - 1;
        if (i < 0) i += n;
        if (i >= 0 && i < n)
          return Value(
              obj.text().sub(at_cp[static_cast<size_t>(i)],
                             at_cp[static_cast<size_t>(i) + 1] - at_cp[static_cast<size_t>(i)]));
      }
      return Value();
    case Kind::dict:
    case Kind::space: {
      const std::string key = index.is(Kind::string) ? index.str() : to_text(index).bytes;
      if (const Value* v = obj.object().find(key)) return *v;
      return Value();
    }
    default:
      return Value();
  }
}

Value Interpreter::chain(const Expr& f, Value operand) {
  if (f.kids[0]) operand = chain(*f.kids[0], std::move(operand));
  Call c = arguments(f.args, f.name);
  line_ = f.line;
  charge(operand);
  return charge(apply_filter(f.name, operand, c));
}

Value Interpreter::filter(std::string_view name, const Value& operand, Call& c) {
  return apply_filter(name, operand, c);
}

bool Interpreter::test(std::string_view name, const Value& operand, Call& c) {
  return apply_test(name, operand, c);
}

Value Interpreter::eval(const Expr& e) {
  step();
  switch (e.kind) {
    case ExprKind::literal:
      return e.value;
    case ExprKind::name:
      return lookup(e.name);
    case ExprKind::list:
    case ExprKind::tuple: {
      List items;
      items.reserve(e.kids.size());
      for (const auto& k : e.kids) items.push_back(eval(*k));
      return e.kind == ExprKind::tuple ? Value::tuple(std::move(items))
                                       : Value::list(std::move(items));
    }
    case ExprKind::dict: {
      auto o = std::make_shared<Object>();
      List keys;
      bool all_strings = true;
      for (size_t i = 0; i + 1 < e.kids.size(); i += 2) {
        const Value k = eval(*e.kids[i]);
        all_strings = all_strings && k.is(Kind::string);
        const size_t before = o->entries.size();
        o->set(k.is(Kind::string) ? k.str() : to_text(k).bytes, eval(*e.kids[i + 1]));
        if (o->entries.size() > before) keys.push_back(k);
      }
      if (!all_strings) o->keys = std::move(keys);
      return Value::dict(std::move(o));
    }
    case ExprKind::attr: {
      const Value obj = eval(*e.kids[0]);
      line_ = e.line;
      return attribute(obj, e.name, e);
    }
    case ExprKind::item: {
      const Value obj = eval(*e.kids[0]);
      const Value index = eval(*e.kids[1]);
      line_ = e.line;
      if (obj.is(Kind::string)) charge(obj);  // indexes code points
      return item(obj, index, e);
    }
    case ExprKind::slice: {
      const Value obj = eval(*e.kids[0]);
      Value bounds[3];
      for (int i = 0; i < 3; ++i)
        if (e.kids[static_cast<size_t>(i) + 1])
          bounds[i] = eval(*e.kids[static_cast<size_t>(i) + 1]);
      line_ = e.line;
      if (obj.is(Kind::list)) {
        List out;
        for (int64_t i : slice_indices(static_cast<int64_t>(obj.items().size()), bounds[0],
                                       bounds[1], bounds[2]))
          out.push_back(obj.items()[static_cast<size_t>(i)]);
        charge(obj);
        return charge(Value::list(std::move(out)));
      }
      if (obj.is(Kind::string)) {
        const auto at = code_point_offsets(obj.str());
        Text out;
        for (int64_t i :
             slice_indices(static_cast<int64_t>(at.size()) - 1, bounds[0], bounds[1], bounds[2]))
          out.append(obj.text().sub(at[static_cast<size_t>(i)],
                                    at[static_cast<size_t>(i) + 1] - at[static_cast<size_t>(i)]));
        charge(obj);
        return charge(Value(std::move(out)));
      }
      if (obj.is_undefined()) undefined_error(*e.kids[0]);
      throw Error(e.line, "'" + std::string(obj.type_name()) + "' object is not subscriptable");
    }
    case ExprKind::unary: {
      const Value v = eval(*e.kids[0]);
      line_ = e.line;
      if (e.name == "not") return Value(!v.truthy());
      if (v.is_undefined()) undefined_error(*e.kids[0]);
      if (!v.is_number())
        throw Error(e.line, "bad operand type for unary " + e.name + ": '" +
                                std::string(v.type_name()) + "'");
      if (e.name == "+") return v.is(Kind::real) ? v : Value(v.integer());
      if (v.is(Kind::real)) return Value(-v.real());
      if (v.integer() == INT64_MIN) throw Error(e.line, "integer overflow");
      return Value(-v.integer());
    }
    case ExprKind::binary:
      return charge(binary(e));
    case ExprKind::compare: {  // a < b < c is a < b and b < c, each operand evaluated once
      Value l = eval(*e.kids[0]);
      for (size_t i = 0; i < e.ops.size(); ++i) {
        Value r = eval(*e.kids[i + 1]);
        line_ = e.line;
        charge(l);
        charge(r);
        if (!compare(e.ops[i], l, r, e.line)) return Value(false);
        l = std::move(r);
      }
      return Value(true);
    }
    case ExprKind::cond: {
      if (eval(*e.kids[1]).truthy()) return eval(*e.kids[0]);
      return e.kids[2] ? eval(*e.kids[2]) : Value();
    }
    case ExprKind::filter: {
      const Value v = eval(*e.kids[0]);
      Call c = arguments(e.args, e.name);
      line_ = e.line;
      charge(v);
      return charge(apply_filter(e.name, v, c));
    }
    case ExprKind::test: {
      const Value v = eval(*e.kids[0]);
      Call c = arguments(e.args, e.name);
      line_ = e.line;
      return Value(apply_test(e.name, v, c) != e.negated);
    }
    case ExprKind::call:
      return call(e, nullptr);
  }
  return Value();
}

bool Interpreter::compare(const std::string& op, const Value& l, const Value& r, int line) {
  if (op == "==") return equal(l, r);
  if (op == "!=") return !equal(l, r);
  if (op == "in" || op == "not in") {
    bool found = false;
    if (r.is(Kind::string)) {
      if (!l.is(Kind::string))
        throw Error(line, "'in <string>' requires string as left operand, not " +
                              std::string(l.type_name()));
      found = r.str().find(l.str()) != std::string::npos;
    } else if (r.is(Kind::list)) {
      for (const Value& v : r.items()) found = found || equal(l, v);
    } else if (r.is_mapping()) {
      found = l.is(Kind::string) && r.object().find(l.str());
    } else if (!r.is_undefined()) {
      throw Error(line, "argument of type '" + std::string(r.type_name()) + "' is not iterable");
    }
    return found != (op == "not in");
  }
  if (op == "<") return less(l, r);
  if (op == ">") return less(r, l);
  if (op == "<=") return !less(r, l);
  return !less(l, r);  // >=
}

Value Interpreter::binary(const Expr& e) {
  const std::string& op = e.name;
  if (op == "and" || op == "or") {
    Value l = eval(*e.kids[0]);
    if (l.truthy() == (op == "or")) return l;
    return eval(*e.kids[1]);
  }
  const Value l = eval(*e.kids[0]);
  const Value r = eval(*e.kids[1]);
  line_ = e.line;
  if (op == "~") {
    Text t = to_text(l, limits_.max_output);
    t.append(to_text(r, limits_.max_output));
    check_size(t.bytes.size());
    return Value(std::move(t));
  }
  if (l.is_undefined()) undefined_error(*e.kids[0]);
  if (r.is_undefined()) undefined_error(*e.kids[1]);
  auto bad = [&]() -> Value {
    throw Error(e.line, "unsupported operand type(s) for " + op + ": '" +
                            std::string(l.type_name()) + "' and '" + std::string(r.type_name()) +
                            "'");
  };
  if (op == "+") {
    if (l.is(Kind::string) && r.is(Kind::string)) {
      check_size(l.str().size() + r.str().size());
      const bool markup = l.is_markup() || r.is_markup();
      Text t = markup && !l.is_markup() ? html_escape(l.text()) : l.text();
      t.append(markup && !r.is_markup() ? html_escape(r.text()) : r.text());
      return markup ? Value::markup(std::move(t)) : Value(std::move(t));
    }
    if (l.is(Kind::list) && r.is(Kind::list)) {
      check_size(l.items().size() + r.items().size());
      List out = l.items();
      out.insert(out.end(), r.items().begin(), r.items().end());
      return Value::list(std::move(out));
    }
  }
  if (op == "*" &&
      (l.is(Kind::string) || l.is(Kind::list) || r.is(Kind::string) || r.is(Kind::list))) {
    const Value& seq = l.is_number() ? r : l;
    const Value& times = l.is_number() ? l : r;
    if (!times.is_number() || times.is(Kind::real) || seq.is_number()) return bad();
    const bool empty = seq.is(Kind::string) ? seq.str().empty() : seq.items().empty();
    const int64_t n = empty ? 0 : std::max<int64_t>(0, times.integer());
    if (seq.is(Kind::string)) {
      check_size(seq.str().size() * static_cast<size_t>(std::min<int64_t>(n, INT32_MAX)));
      Text t;
      for (int64_t i = 0; i < n; ++i) t.append(seq.text());
      return Value(std::move(t));
    }
    check_size(seq.items().size() * static_cast<size_t>(std::min<int64_t>(n, INT32_MAX)));
    List out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
    return Value::list(std::move(out));
  }
  if (op == "%" && l.is(Kind::string)) {
    Call c;
    c.in = this;
    c.line = e.line;
    c.positional.push_back(r);
    return apply_filter("format", l, c);
  }
  if (!l.is_number() || !r.is_number()) return bad();
  const bool real = l.is(Kind::real) || r.is(Kind::real);
  if (op == "/") {
    if (r.real() == 0) throw Error(e.line, "division by zero");
    return Value(l.real() / r.real());
  }
  if (op == "**") {
    if (!real && r.integer() >= 0) {  // by squaring, so 1 ** 10**18 takes 60 steps
      int64_t acc = 1, base = l.integer();
      for (int64_t k = r.integer(); k > 0;) {
        if ((k & 1) && overflows(acc, base, '*', acc)) throw Error(e.line, "integer overflow");
        k >>= 1;
        if (k > 0 && overflows(base, base, '*', base)) throw Error(e.line, "integer overflow");
      }
      return Value(acc);
    }
    return Value(std::pow(l.real(), r.real()));
  }
  if (op == "//" || op == "%") {
    if (r.real() == 0) throw Error(e.line, "division by zero");
    if (real) {
      const double a = l.real(), b = r.real();
      const double m = std::fmod(a, b);
      const double mod = (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
      if (op == "%") return Value(mod);
      return Value(std::floor((a - mod) / b + 0.5));
    }
    const int64_t a = l.integer(), b = r.integer();
    if (a == INT64_MIN && b == -1) throw Error(e.line, "integer overflow");
    const int64_t q = floor_div(a, b);
    return op == "//" ? Value(q) : Value(a - q * b);
  }
  if (real) {
    const double a = l.real(), b = r.real();
    return Value(op == "+" ? a + b : op == "-" ? a - b : a * b);
  }
  int64_t out = 0;
  if (overflows(l.integer(), r.integer(), op[0], out)) throw Error(e.line, "integer overflow");
  return Value(out);
}

}  // namespace sy::jinja
