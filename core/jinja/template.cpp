#include "jinja/template.h"

#include "jinja/builtins.h"
#include "jinja/parser.h"

namespace sy::jinja {
namespace {

// Jinja2 refuses an unknown filter or test when it compiles the template, unless it sits in a
// conditional (an if, or x if c else y): there only when the render reaches it.
void check_names(const Expr& e) {
  if (e.kind == ExprKind::filter && !is_filter(e.name))
    throw Error(e.line, "no filter named '" + e.name + "'");
  if (e.kind == ExprKind::test && !is_test(e.name))
    throw Error(e.line, "no test named '" + e.name + "'");
  if (e.kind == ExprKind::cond) return;
  for (const auto& k : e.kids)
    if (k) check_names(*k);
  for (const auto& k : e.args.positional) check_names(*k);
  for (const auto& [name, k] : e.args.keyword) check_names(*k);
}

void check_names(const Body& b) {
  for (const auto& s : b) {
    if (s->kind == StmtKind::branch) continue;
    for (const auto& e : s->exprs)
      if (e) check_names(*e);
    for (const auto& e : s->defaults)
      if (e) check_names(*e);
    for (const auto& body : s->bodies) check_names(body);
  }
}

}  // namespace

Template::Template(std::string_view source) {
  auto body = std::make_shared<Body>(parse(source));
  check_names(*body);
  body_ = std::move(body);
}

Text Template::render(const Object& variables, const Limits& limits) const {
  auto globals = std::make_shared<Frame>();
  for (const auto& [k, v] : variables.entries) globals->vars[k] = v;
  Interpreter in(limits, std::move(globals));
  return in.render(*body_);
}

Value strftime_now(const std::tm& now) {
  return Value::function("strftime_now", [now](Call& c) {
    const std::string format = to_text(c.arg(0, "format")).bytes;
    if (format.size() > 256) throw Error(c.line, "strftime_now: format longer than 256 bytes");
    char buf[1024];
    const size_t n = format.empty() ? 0 : std::strftime(buf, sizeof buf, format.c_str(), &now);
    return Value(std::string(buf, n));
  });
}

Value from_json(const nlohmann::ordered_json& j, bool from_data) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      return u > static_cast<uint64_t>(INT64_MAX) ? Value(static_cast<double>(u))
                                                  : Value(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(j.get<std::string>(), from_data);
    case nlohmann::ordered_json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& x : j) items.push_back(from_json(x, from_data));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto o = std::make_shared<Object>();
      o->data_keys = from_data;
      o->entries.reserve(j.size());
      for (const auto& [k, x] : j.items()) o->entries.emplace_back(k, from_json(x, from_data));
      return Value::dict(std::move(o));
    }
    default:
      return Value();
  }
}

}  // namespace sy::jinja
