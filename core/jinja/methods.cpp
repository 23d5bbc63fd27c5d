// Python's str, dict and list methods a template may call, and the built-in globals. Lists and
// dicts are immutable, as in transformers' sandbox: list.append and dict.update are refused.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/strings.h"
#include "jinja/utf8.h"

namespace sy::jinja {
namespace {

const std::string* optional_string(const Value& v, std::string& keep) {
  if (!v.is(Kind::string)) return nullptr;
  keep = v.str();
  return &keep;
}

bool affix(const Value& obj, Call& c, bool prefix) {
  const Value& a = c.arg(0, prefix ? "prefix" : "suffix");
  auto one = [&](const std::string& p) {
    const std::string& s = obj.str();
    return p.size() <= s.size() && (prefix ? s.compare(0, p.size(), p) == 0
                                           : s.compare(s.size() - p.size(), p.size(), p) == 0);
  };
  if (a.is(Kind::string)) return one(a.str());
  if (a.is(Kind::list)) {
    for (const Value& x : a.items())
      if (x.is(Kind::string) && one(x.str())) return true;
    return false;
  }
  throw Error(c.line, std::string(prefix ? "startswith" : "endswith") +
                          " first arg must be str or a tuple of str");
}

bool all_of(const std::string& s, bool (*pred)(unsigned char)) {
  if (s.empty()) return false;
  for (unsigned char ch : s)
    if (!pred(ch)) return false;
  return true;
}

// str.format: {} {0} {name}, with {{ and }} for braces; no format specs.
Value str_format(const Value& obj, Call& c) {
  const Text& f = obj.text();
  Text out;
  size_t auto_index = 0, from = 0;
  for (size_t i = 0; i < f.bytes.size(); ++i) {
    const char ch = f.bytes[i];
    if (ch != '{' && ch != '}') continue;
    out.append(f.sub(from, i - from));
    if (i + 1 < f.bytes.size() && f.bytes[i + 1] == ch) {
      out.append(std::string(1, ch));
      from = ++i + 1;
      continue;
    }
    if (ch == '}') throw Error(c.line, "Single '}' encountered in format string");
    const size_t close = f.bytes.find('}', i);
    if (close == std::string::npos) throw Error(c.line, "Single '{' encountered in format string");
    const std::string field = f.bytes.substr(i + 1, close - i - 1);
    Value v;
    if (field.empty()) {
      v = c.arg(auto_index++, "\x01");
    } else if (std::all_of(field.begin(), field.end(),
                           [](char d) { return d >= '0' && d <= '9'; })) {
      size_t i = SIZE_MAX;  // no such argument when the digits overflow (stoul would throw)
      std::from_chars(field.data(), field.data() + field.size(), i);
      v = c.arg(i, "\x01");
    } else {
      v = c.arg(SIZE_MAX, field);
    }
    if (v.is_undefined()) throw Error(c.line, "format: no argument for {" + field + "}");
    out.append(to_text(v));
    from = i = close;
    ++from;
  }
  out.append(f.sub(from));
  return Value(std::move(out));
}

std::optional<Value> string_method(const Value& obj, std::string_view name, Call& c) {
  const Text& s = obj.text();
  std::string keep;
  if (name == "startswith") return Value(affix(obj, c, true));
  if (name == "endswith") return Value(affix(obj, c, false));
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Side side = name == "strip" ? Side::both : name == "lstrip" ? Side::left : Side::right;
    return Value(strip(s, optional_string(c.arg(0, "chars"), keep), side));
  }
  if (name == "split" || name == "rsplit") {
    const Value& m = c.arg(1, "maxsplit");
    return Value::list(split(s, optional_string(c.arg(0, "sep"), keep),
                             m.is_number() ? m.integer() : -1, name == "rsplit"));
  }
  if (name == "splitlines") return Value::list(splitlines(s, c.arg(0, "keepends").truthy()));
  if (name == "upper") return Value(change_case(s, Case::upper));
  if (name == "lower") return Value(change_case(s, Case::lower));
  if (name == "title") return Value(change_case(s, Case::title));
  if (name == "capitalize") return Value(change_case(s, Case::capitalize));
  if (name == "swapcase") return Value(change_case(s, Case::swap));
  if (name == "replace") {
    const Value& count = c.arg(2, "count");
    Text t = replace(s, to_text(c.arg(0, "old")).bytes, to_text(c.arg(1, "new")),
                     count.is_number() ? count.integer() : -1);
    c.in->check_size(t.bytes.size());
    return Value(std::move(t));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    const std::string sub = to_text(c.arg(0, "sub")).bytes;
    if (name == "count") {
      if (sub.empty()) return Value(static_cast<int64_t>(code_point_count(s.bytes) + 1));
      int64_t n = 0;
      for (size_t p = s.bytes.find(sub); p != std::string::npos;
           p = s.bytes.find(sub, p + sub.size()))
        ++n;
      return Value(n);
    }
    const bool right = name[0] == 'r';
    const size_t p = right ? s.bytes.rfind(sub) : s.bytes.find(sub);
    if (p == std::string::npos) {
      if (name.find("index") != std::string_view::npos) throw Error(c.line, "substring not found");
      return Value(int64_t{-1});
    }
    return Value(static_cast<int64_t>(code_point_count(std::string_view(s.bytes).substr(0, p))));
  }
  if (name == "join") {
    const Value& items = c.arg(0, "iterable");
    if (!items.is(Kind::list)) throw Error(c.line, "join: can only join a list");
    for (const Value& x : items.items())
      if (!x.is(Kind::string)) throw Error(c.line, "join: sequence item: expected str instance");
    Text t = join(items.items(), s, c.in->limits().max_output);
    c.in->check_size(t.bytes.size());
    return Value(std::move(t));
  }
  if (name == "format") return str_format(obj, c);
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal")
    return Value(all_of(s.bytes, [](unsigned char ch) { return ch >= '0' && ch <= '9'; }));
  if (name == "isalpha")
    return Value(all_of(s.bytes, [](unsigned char ch) {
      return ((ch | 32) >= 'a' && (ch | 32) <= 'z') || ch >= 0x80;
    }));
  if (name == "isalnum")
    return Value(all_of(s.bytes, [](unsigned char ch) {
      return ((ch | 32) >= 'a' && (ch | 32) <= 'z') || (ch >= '0' && ch <= '9') || ch >= 0x80;
    }));
  if (name == "isspace")
    return Value(!s.bytes.empty() && strip(s, nullptr, Side::both).bytes.empty());
  if (name == "islower" || name == "isupper")
    return Value(in_case(s, name == "islower" ? Case::lower : Case::upper));
  return std::nullopt;
}

std::optional<Value> dict_method(const Value& obj, std::string_view name, Call& c) {
  const Object& o = obj.object();
  if (name == "items" || name == "keys" || name == "values") {
    List out;
    for (size_t i = 0; i < o.entries.size(); ++i) {
      const Value key = o.key(i);
      const Value& x = o.entries[i].second;
      if (name == "items")
        out.push_back(Value::tuple({key, x}));
      else
        out.push_back(name == "keys" ? key : x);
    }
    return Value::list(std::move(out));
  }
  if (name == "get") {
    const Value& key = c.arg(0, "key");
    const Value* v = key.is(Kind::string) ? o.find(key.str()) : nullptr;
    if (v) return *v;
    return c.has(1, "default") ? c.arg(1, "default") : Value::none();
  }
  if (name == "copy") {
    auto copy = std::make_shared<Object>(o);
    return Value::dict(std::move(copy));
  }
  return std::nullopt;
}

std::optional<Value> list_method(const Value& obj, std::string_view name, Call& c) {
  const List& l = obj.items();
  if (name == "index") {
    for (size_t i = 0; i < l.size(); ++i)
      if (equal(l[i], c.arg(0, "value"))) return Value(static_cast<int64_t>(i));
    throw Error(c.line, "list.index(x): x not in list");
  }
  if (name == "count")
    return Value(static_cast<int64_t>(std::count_if(
        l.begin(), l.end(), [&](const Value& x) { return equal(x, c.arg(0, "value")); })));
  if (name == "copy") return Value::list(l);
  return std::nullopt;
}

bool mutates(std::string_view name) {
  static const std::string_view kMutating[] = {"append", "pop",        "insert",  "extend",
                                               "remove", "clear",      "sort",    "reverse",
                                               "update", "setdefault", "popitem", "__setitem__"};
  return std::find(std::begin(kMutating), std::end(kMutating), name) != std::end(kMutating);
}

Value range(Call& c) {
  c.at_most(3);
  if (c.positional.empty()) throw Error(c.line, "range expected at least 1 argument, got 0");
  for (const Value& v : c.positional)
    if (!v.is_number() || v.is(Kind::real))
      throw Error(c.line, "range: '" + std::string(v.type_name()) +
                              "' object cannot be interpreted as an integer");
  int64_t start = 0, stop, step = 1;
  if (c.positional.size() == 1) {
    stop = c.positional[0].integer();
  } else {
    start = c.positional[0].integer();
    stop = c.positional[1].integer();
    if (c.positional.size() == 3) step = c.positional[2].integer();
  }
  if (step == 0) throw Error(c.line, "range() arg 3 must not be zero");
  const double n =
      std::max(0.0, std::ceil((static_cast<double>(stop) - static_cast<double>(start)) /
                              static_cast<double>(step)));
  if (n > 100000)  // Jinja2's sandbox: MAX_RANGE
    throw Error(c.line, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
  return Value::list(std::move(out));
}

Value keywords_object(Call& c, bool space) {
  auto o = std::make_shared<Object>();
  if (!c.positional.empty()) {
    const Value& init = c.positional[0];
    if (init.is_mapping()) o->entries = init.object().entries;
  }
  for (auto& [k, v] : c.keyword) o->set(k, v);
  return space ? Value::space(std::move(o)) : Value::dict(std::move(o));
}

}  // namespace

std::optional<Value> call_method(const Value& obj, std::string_view name, Call& c) {
  std::optional<Value> r;
  if (obj.is(Kind::string))
    r = string_method(obj, name, c);
  else if (obj.is(Kind::dict))
    r = dict_method(obj, name, c);
  else if (obj.is(Kind::list))
    r = list_method(obj, name, c);
  if (!r && (obj.is(Kind::list) || obj.is(Kind::dict)) && mutates(name))
    throw Error(c.line, "access to attribute '" + std::string(name) + "' of '" +
                            std::string(obj.type_name()) + "' object is unsafe");
  return r;
}

Value builtin_global(std::string_view name) {
  if (name == "range") return Value::function("range", range);
  if (name == "namespace")
    return Value::function("namespace", [](Call& c) { return keywords_object(c, true); });
  if (name == "dict")
    return Value::function("dict", [](Call& c) { return keywords_object(c, false); });
  if (name == "raise_exception")
    return Value::function("raise_exception", [](Call& c) -> Value {
      throw Error(c.line, to_text(c.arg(0, "message")).bytes);
    });
  return Value();
}

}  // namespace sy::jinja
