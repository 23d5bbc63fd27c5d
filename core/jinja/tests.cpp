// Jinja2's tests: {% if x is defined %}, {{ xs|select('odd') }}.
#include <cmath>
#include <unordered_map>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/strings.h"

namespace sy::jinja {
namespace {

using TestFn = bool (*)(const Value&, Call&);

bool integral(const Value& v) {
  return v.is(Kind::integer);
}

const Value& other(Call& c, std::string_view key = "value") {
  if (!c.has(0, key) && c.positional.empty())
    throw Error(c.line, std::string(c.name) + "() needs an argument");
  return c.arg(0, key);
}

bool compare(const Value& v, Call& c, int want) {  // want: -1 <, 0 ==, 1 >, 2 <=, 3 >=, 4 !=
  const Value& o = other(c, "other");
  switch (want) {
    case -1:
      return less(v, o);
    case 0:
      return equal(v, o);
    case 1:
      return less(o, v);
    case 2:
      return !less(o, v);
    case 3:
      return !less(v, o);
    default:
      return !equal(v, o);
  }
}

const std::unordered_map<std::string_view, TestFn>& tests() {
  static const std::unordered_map<std::string_view, TestFn> t = {
      {"defined", [](const Value& v, Call&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, Call&) { return v.is_undefined(); }},
      {"none", [](const Value& v, Call&) { return v.is(Kind::none); }},
      {"boolean", [](const Value& v, Call&) { return v.is(Kind::boolean); }},
      {"true", [](const Value& v, Call&) { return v.is(Kind::boolean) && v.boolean(); }},
      {"false", [](const Value& v, Call&) { return v.is(Kind::boolean) && !v.boolean(); }},
      {"integer", [](const Value& v, Call&) { return integral(v); }},
      {"float", [](const Value& v, Call&) { return v.is(Kind::real); }},
      {"number", [](const Value& v, Call&) { return v.is_number(); }},
      {"string", [](const Value& v, Call&) { return v.is(Kind::string); }},
      {"mapping", [](const Value& v, Call&) { return v.is(Kind::dict); }},
      {"iterable",
       [](const Value& v, Call&) {
         return v.is(Kind::list) || v.is(Kind::dict) || v.is(Kind::string);
       }},
      {"sequence",
       [](const Value& v, Call&) {
         return v.is(Kind::list) || v.is(Kind::dict) || v.is(Kind::string);
       }},
      {"callable", [](const Value& v, Call&) { return v.is(Kind::function); }},
      {"odd",
       [](const Value& v, Call& c) {
         if (!v.is_number()) throw Error(c.line, "odd: not a number");
         return v.integer() % 2 != 0;
       }},
      {"even",
       [](const Value& v, Call& c) {
         if (!v.is_number()) throw Error(c.line, "even: not a number");
         return v.integer() % 2 == 0;
       }},
      {"divisibleby",
       [](const Value& v, Call& c) {
         const Value& n = other(c, "num");
         if (!v.is_number() || !n.is_number() || n.integer() == 0)
           throw Error(c.line, "divisibleby: needs numbers and a divisor other than 0");
         return v.integer() % n.integer() == 0;
       }},
      {"sameas",
       [](const Value& v, Call& c) {
         const Value& o = other(c, "other");
         if (v.kind() != o.kind()) return false;
         if (v.is(Kind::none) || v.is_undefined()) return true;
         if (v.is(Kind::boolean)) return v.boolean() == o.boolean();
         if (v.is(Kind::list)) return &v.items() == &o.items();
         if (v.is(Kind::string)) return &v.text() == &o.text();
         if (v.is_mapping()) return v.object_ptr() == o.object_ptr();
         return false;
       }},
      {"eq", [](const Value& v, Call& c) { return compare(v, c, 0); }},
      {"equalto", [](const Value& v, Call& c) { return compare(v, c, 0); }},
      {"==", [](const Value& v, Call& c) { return compare(v, c, 0); }},
      {"ne", [](const Value& v, Call& c) { return compare(v, c, 4); }},
      {"!=", [](const Value& v, Call& c) { return compare(v, c, 4); }},
      {"lt", [](const Value& v, Call& c) { return compare(v, c, -1); }},
      {"lessthan", [](const Value& v, Call& c) { return compare(v, c, -1); }},
      {"<", [](const Value& v, Call& c) { return compare(v, c, -1); }},
      {"gt", [](const Value& v, Call& c) { return compare(v, c, 1); }},
      {"greaterthan", [](const Value& v, Call& c) { return compare(v, c, 1); }},
      {">", [](const Value& v, Call& c) { return compare(v, c, 1); }},
      {"le", [](const Value& v, Call& c) { return compare(v, c, 2); }},
      {"<=", [](const Value& v, Call& c) { return compare(v, c, 2); }},
      {"ge", [](const Value& v, Call& c) { return compare(v, c, 3); }},
      {">=", [](const Value& v, Call& c) { return compare(v, c, 3); }},
      {"in",
       [](const Value& v, Call& c) {
         const Value& seq = other(c, "seq");
         if (seq.is(Kind::string))
           return v.is(Kind::string) && seq.str().find(v.str()) != std::string::npos;
         if (seq.is(Kind::list)) {
           for (const Value& x : seq.items())
             if (equal(v, x)) return true;
           return false;
         }
         if (seq.is_mapping()) return v.is(Kind::string) && seq.object().find(v.str()) != nullptr;
         throw Error(c.line, "in: argument is not a container");
       }},
      {"lower", [](const Value& v, Call&) { return in_case(to_text(v), Case::lower); }},
      {"upper", [](const Value& v, Call&) { return in_case(to_text(v), Case::upper); }},
      {"escaped", [](const Value&, Call&) { return false; }},
      {"filter", [](const Value& v, Call&) { return v.is(Kind::string) && is_filter(v.str()); }},
      {"test", [](const Value& v, Call&) { return v.is(Kind::string) && is_test(v.str()); }},
  };
  return t;
}

}  // namespace

bool is_test(std::string_view name) {
  return tests().count(name) > 0;
}

bool apply_test(std::string_view name, const Value& v, Call& c) {
  auto it = tests().find(name);
  if (it == tests().end()) throw Error(c.line, "no test named '" + std::string(name) + "'");
  return it->second(v, c);
}

}  // namespace sy::jinja
