// Jinja2's built-in filters, with transformers' tojson.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/strings.h"
#include "jinja/template.h"
#include "jinja/utf8.h"

namespace sy::jinja {
namespace {

using FilterFn = Value (*)(const Value&, Call&);

// A string filter's operand: undefined reads as "", other values as str() does.
Text as_text(const Value& v) {
  return v.is(Kind::string) ? v.text() : to_text(v);
}

List as_list(const Value& v, Call& c) {
  switch (v.kind()) {
    case Kind::undefined:
      return {};
    case Kind::list:
      return v.items();
    case Kind::dict:
    case Kind::space: {
      List keys;
      for (size_t i = 0; i < v.object().entries.size(); ++i) keys.push_back(v.object().key(i));
      return keys;
    }
    case Kind::string: {
      List chars;
      const auto at = code_point_offsets(v.str());
      for (size_t i = 0; i + 1 < at.size(); ++i)
        chars.emplace_back(v.text().sub(at[i], at[i + 1] - at[i]));
      return chars;
    }
    default:
      throw Error(c.line, std::string(c.name) + ": '" + std::string(v.type_name()) +
                              "' object is not iterable");
  }
}

// attribute="a.b.0": a path of keys and list indexes.
Value path(const Value& v, const Value& attribute) {
  if (attribute.is_number()) {
    if (v.is(Kind::list)) {
      const int64_t i = attribute.integer();
      if (i >= 0 && static_cast<size_t>(i) < v.items().size())
        return v.items()[static_cast<size_t>(i)];
    }
    return Value();
  }
  Value cur = v;
  const std::string& p = attribute.str();
  size_t from = 0;
  for (;;) {
    const size_t dot = p.find('.', from);
    const std::string key =
        p.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (cur.is_mapping()) {
      const Value* x = cur.object().find(key);
      cur = x ? *x : Value();
    } else if (cur.is(Kind::list) && !key.empty() &&
               std::all_of(key.begin(), key.end(),
                           [](char ch) { return ch >= '0' && ch <= '9'; })) {
      size_t i = SIZE_MAX;  // stays past the end when the digits overflow (stoul would throw)
      std::from_chars(key.data(), key.data() + key.size(), i);
      cur = i < cur.items().size() ? cur.items()[i] : Value();
    } else {
      return Value();
    }
    if (dot == std::string::npos) return cur;
    from = dot + 1;
  }
}

bool flag(const Call& c, size_t i, std::string_view key) {
  return c.arg(i, key).truthy();
}

// Sort key comparison: strings compare case-insensitively unless case_sensitive.
bool sort_less(const Value& a, const Value& b, bool case_sensitive) {
  if (!case_sensitive && a.is(Kind::string) && b.is(Kind::string))
    return change_case(a.text(), Case::lower).bytes < change_case(b.text(), Case::lower).bytes;
  return less(a, b);
}

bool same_key(const Value& a, const Value& b, bool case_sensitive) {
  if (!case_sensitive && a.is(Kind::string) && b.is(Kind::string))
    return change_case(a.text(), Case::lower).bytes == change_case(b.text(), Case::lower).bytes;
  return equal(a, b);
}

// select/reject/selectattr/rejectattr: the test named by the argument at `first` (truthiness
// when there is none), with the arguments after it.
Value pick(const Value& v, Call& c, bool keep, bool by_attribute) {
  const List items = v.truthy() ? as_list(v, c) : List();
  size_t first = 0;
  Value attribute;
  if (by_attribute) {
    if (c.positional.empty()) throw Error(c.line, std::string(c.name) + "() needs an attribute");
    attribute = c.positional[0];
    first = 1;
  }
  std::string test;
  if (c.positional.size() > first) test = to_text(c.positional[first]).bytes;
  Call args;
  args.name = test;
  args.in = c.in;
  args.line = c.line;
  for (size_t i = first + 1; i < c.positional.size(); ++i)
    args.positional.push_back(c.positional[i]);
  args.keyword = c.keyword;
  List out;
  for (const Value& x : items) {
    const Value subject = by_attribute ? path(x, attribute) : x;
    const bool pass = test.empty() ? subject.truthy() : apply_test(test, subject, args);
    if (pass == keep) out.push_back(x);
  }
  return Value::generator(std::move(out));
}

Value format(const Value& v, Call& c) {
  // printf-style: %s %d %i %r %f %%, as Python's str % args.
  const Text fmt = as_text(v);
  List args = c.positional;
  if (args.size() == 1 && args[0].is(Kind::list)) args = args[0].items();
  Text out;
  size_t next = 0;
  const std::string& f = fmt.bytes;
  size_t from = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') continue;
    out.append(fmt.sub(from, i - from));
    if (i + 1 >= f.size()) throw Error(c.line, "incomplete format");
    const char k = f[++i];
    from = i + 1;
    if (k == '%') {
      out.append("%");
      continue;
    }
    if (next >= args.size()) throw Error(c.line, "not enough arguments for format string");
    const Value& a = args[next++];
    if (k == 's') {
      out.append(to_text(a));
    } else if (k == 'r') {
      out.append(to_text(Value::list({a})).sub(1, to_text(Value::list({a})).bytes.size() - 2));
    } else if (k == 'd' || k == 'i') {
      if (!a.is_number()) throw Error(c.line, "%d format: a number is required");
      out.append(std::to_string(a.integer()));
    } else if (k == 'f') {
      char b[64];
      snprintf(b, sizeof b, "%f", a.real());
      out.append(b);
    } else {
      throw Error(c.line, std::string("unsupported format character '") + k + "'");
    }
  }
  out.append(fmt.sub(from));
  if (next < args.size())
    throw Error(c.line, "not all arguments converted during string formatting");
  return Value(std::move(out));
}

Value int_filter(const Value& v, Call& c) {
  const Value& fallback = c.has(0, "default") ? c.arg(0, "default") : Value(int64_t{0});
  const int base = c.has(1, "base") ? static_cast<int>(c.arg(1, "base").integer()) : 10;
  if (v.is_number()) return Value(v.integer());
  if (v.is(Kind::string)) {
    const Text t = strip(v.text(), nullptr, Side::both);
    std::string s = t.bytes;
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    int64_t out = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    if (b < e && *b == '+') ++b;
    auto r = std::from_chars(b, e, out, base);
    if (r.ec == std::errc() && r.ptr == e && b < e) return Value(out);
    double d = 0;
    auto rd = std::from_chars(s.data(), e, d);
    if (rd.ec == std::errc() && rd.ptr == e && std::isfinite(d) && std::fabs(d) < 9e18)
      return Value(static_cast<int64_t>(d));
  }
  return fallback;
}

Value float_filter(const Value& v, Call& c) {
  const Value& fallback = c.has(0, "default") ? c.arg(0, "default") : Value(0.0);
  if (v.is_number()) return Value(v.real());
  if (v.is(Kind::string)) {
    const std::string s = strip(v.text(), nullptr, Side::both).bytes;
    double d = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), d);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty()) return Value(d);
  }
  return fallback;
}

Value tojson(const Value& v, Call& c) {
  JsonStyle style;
  const Value& indent = c.arg(1, "indent");
  if (indent.is(Kind::string)) {
    style.indent = 0;
    style.indent_text = indent.str();
  } else if (indent.is_number()) {
    style.indent = static_cast<int>(std::clamp<int64_t>(indent.integer(), 0, 64));
  }
  const Value& sep = c.arg(2, "separators");
  if (sep.is(Kind::list) && sep.items().size() == 2) {
    style.item_sep = to_text(sep.items()[0]).bytes;
    style.key_sep = to_text(sep.items()[1]).bytes;
  }
  style.sort_keys = flag(c, 3, "sort_keys");
  style.ensure_ascii = flag(c, 0, "ensure_ascii");
  style.limit = c.in->limits().max_output;
  Text t = to_json(v, style);
  c.in->check_size(t.bytes.size());
  return Value(std::move(t));
}

// llama.cpp's extension, which DeepSeek V3.2's template uses on a call's arguments: the value
// a JSON string encodes (from the caller's data when the string was).
Value from_json_filter(const Value& v, Call& c) {
  if (!v.is(Kind::string))
    throw Error(c.line, "from_json: '" + std::string(v.type_name()) + "' object is not a string");
  const auto j = nlohmann::ordered_json::parse(v.str(), nullptr, false);
  if (j.is_discarded()) throw Error(c.line, "from_json: the string is not JSON");
  return from_json(j, !v.text().data.empty());
}

Value indent(const Value& v, Call& c) {
  const Value& w = c.arg(0, "width");
  const Text pad = w.is(Kind::string)
                       ? w.text()
                       : Text(std::string(static_cast<size_t>(std::clamp<int64_t>(
                                              w.is_undefined() ? 4 : w.integer(), 0, 1024)),
                                          ' '));
  const bool first = flag(c, 1, "first"), blank = flag(c, 2, "blank");
  const Text s = as_text(v);
  const List lines = splitlines(s, true);
  Text out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Text& line = lines[i].text();
    const bool empty = strip(line, nullptr, Side::both).bytes.empty() &&
                       line.bytes.find_first_not_of("\r\n") == std::string::npos;
    if ((i > 0 || first) && (blank || !empty)) out.append(pad);
    out.append(line);
  }
  return Value(std::move(out));
}

Value round_filter(const Value& v, Call& c) {
  const int64_t precision = c.has(0, "precision") ? c.arg(0, "precision").integer() : 0;
  const std::string method = c.has(1, "method") ? to_text(c.arg(1, "method")).bytes : "common";
  const double p = std::pow(10.0, static_cast<double>(precision));
  const double x = v.real() * p;
  double r;
  if (method == "common")
    r = std::round(x);
  else if (method == "ceil")
    r = std::ceil(x);
  else if (method == "floor")
    r = std::floor(x);
  else
    throw Error(c.line, "round: method must be 'common', 'ceil' or 'floor'");
  return Value(r / p);
}

Value map_filter(const Value& v, Call& c) {
  const List items = v.truthy() ? as_list(v, c) : List();
  List out;
  if (c.has(99, "attribute")) {
    const Value& attribute = c.arg(99, "attribute");
    const Value& fallback = c.arg(99, "default");
    for (const Value& x : items) {
      Value y = path(x, attribute);
      out.push_back(y.is_undefined() && !fallback.is_undefined() ? fallback : y);
    }
    return Value::generator(std::move(out));
  }
  if (c.positional.empty()) throw Error(c.line, "map() needs a filter name or attribute=");
  const std::string name = to_text(c.positional[0]).bytes;
  Call args;
  args.name = name;
  args.in = c.in;
  args.line = c.line;
  args.positional.assign(c.positional.begin() + 1, c.positional.end());
  args.keyword = c.keyword;
  for (const Value& x : items) out.push_back(apply_filter(name, x, args));
  return Value::generator(std::move(out));
}

Value sort_filter(const Value& v, Call& c) {
  List items = as_list(v, c);
  const bool reverse = flag(c, 0, "reverse"), cs = flag(c, 1, "case_sensitive");
  const Value& attribute = c.arg(2, "attribute");
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value x = attribute.is_undefined() ? a : path(a, attribute);
    const Value y = attribute.is_undefined() ? b : path(b, attribute);
    return reverse ? sort_less(y, x, cs) : sort_less(x, y, cs);
  });
  return Value::list(std::move(items));
}

Value dictsort(const Value& v, Call& c) {
  if (!v.is_mapping()) throw Error(c.line, "dictsort: not a mapping");
  const bool cs = flag(c, 0, "case_sensitive");
  const std::string by = c.has(1, "by") ? to_text(c.arg(1, "by")).bytes : "key";
  const bool reverse = flag(c, 2, "reverse");
  List pairs;
  const Object& o = v.object();
  for (size_t i = 0; i < o.entries.size(); ++i)
    pairs.push_back(Value::tuple({o.key(i), o.entries[i].second}));
  const size_t at = by == "value" ? 1 : 0;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    return reverse ? sort_less(b.items()[at], a.items()[at], cs)
                   : sort_less(a.items()[at], b.items()[at], cs);
  });
  return Value::list(std::move(pairs));
}

Value unique(const Value& v, Call& c) {
  const List items = as_list(v, c);
  const bool cs = flag(c, 0, "case_sensitive");
  const Value& attribute = c.arg(1, "attribute");
  List out, keys;
  for (const Value& x : items) {
    const Value k = attribute.is_undefined() ? x : path(x, attribute);
    if (std::none_of(keys.begin(), keys.end(),
                     [&](const Value& y) { return same_key(k, y, cs); })) {
      keys.push_back(k);
      out.push_back(x);
    }
  }
  return Value::list(std::move(out));
}

Value extreme(const Value& v, Call& c, bool want_max) {
  const List items = as_list(v, c);
  if (items.empty()) return Value();
  const bool cs = flag(c, 0, "case_sensitive");
  const Value& attribute = c.arg(1, "attribute");
  const Value* best = &items[0];
  for (const Value& x : items) {
    const Value a = attribute.is_undefined() ? x : path(x, attribute);
    const Value b = attribute.is_undefined() ? *best : path(*best, attribute);
    if (want_max ? sort_less(b, a, cs) : sort_less(a, b, cs)) best = &x;
  }
  return *best;
}

Value join_filter(const Value& v, Call& c) {
  List items = as_list(v, c);
  const Value& attribute = c.arg(1, "attribute");
  if (!attribute.is_undefined())
    for (Value& x : items) x = path(x, attribute);
  const Value& d = c.arg(0, "d");
  Text t = join(items, d.is_undefined() ? Text() : as_text(d), c.in->limits().max_output);
  c.in->check_size(t.bytes.size());
  return Value(std::move(t));
}

Value center(const Value& v, Call& c) {
  const Text s = as_text(v);
  const int64_t width = c.has(0, "width") ? c.arg(0, "width").integer() : 80;
  const auto n = static_cast<int64_t>(code_point_count(s.bytes));
  if (width <= n) return Value(s);
  c.in->check_size(static_cast<size_t>(width));
  const int64_t pad = width - n;
  const int64_t left = pad / 2 + (pad & width & 1);
  Text out(std::string(static_cast<size_t>(left), ' '));
  out.append(s);
  out.append(std::string(static_cast<size_t>(pad - left), ' '));
  return Value(std::move(out));
}

Value batch(const Value& v, Call& c) {
  const List items = as_list(v, c);
  const int64_t n = c.arg(0, "linecount").integer();
  if (n <= 0) throw Error(c.line, "batch: linecount must be positive");
  const Value& fill = c.arg(1, "fill_with");
  List out, row;
  for (const Value& x : items) {
    row.push_back(x);
    if (static_cast<int64_t>(row.size()) == n)
      out.push_back(Value::list(std::move(row))), row.clear();
  }
  if (!row.empty()) {
    if (!fill.is_undefined())
      while (static_cast<int64_t>(row.size()) < n) row.push_back(fill);
    out.push_back(Value::list(std::move(row)));
  }
  return Value::list(std::move(out));
}

Value escape(const Value& v, Call&) {
  return v.is_markup() ? v : Value::markup(html_escape(as_text(v)));
}

const std::unordered_map<std::string_view, FilterFn>& filters() {
  static const std::unordered_map<std::string_view, FilterFn> f = {
      {"abs",
       [](const Value& v, Call& c) -> Value {
         if (v.is(Kind::real)) return Value(std::fabs(v.real()));
         if (!v.is_number())
           throw Error(c.line, "abs: bad operand type '" + std::string(v.type_name()) + "'");
         if (v.integer() == INT64_MIN) throw Error(c.line, "integer overflow");
         return Value(v.integer() < 0 ? -v.integer() : v.integer());
       }},
      {"attr",
       [](const Value& v, Call& c) { return path(v, Value(to_text(c.arg(0, "name")).bytes)); }},
      {"batch", batch},
      {"capitalize",
       [](const Value& v, Call&) { return Value(change_case(as_text(v), Case::capitalize)); }},
      {"center", center},
      {"count",
       [](const Value& v, Call& c) {
         if (v.is_generator()) throw Error(c.line, "object of type 'generator' has no len()");
         if (v.is(Kind::string)) return Value(static_cast<int64_t>(code_point_count(v.str())));
         return Value(static_cast<int64_t>(v.is_mapping() ? v.object().entries.size()
                                                          : as_list(v, c).size()));
       }},
      {"default",
       [](const Value& v, Call& c) {
         const bool boolean = flag(c, 1, "boolean");
         if (v.is_undefined() || (boolean && !v.truthy()))
           return c.has(0, "default_value") ? c.arg(0, "default_value") : Value("");
         return v;
       }},
      {"dictsort", dictsort},
      {"escape", escape},
      {"first",
       [](const Value& v, Call& c) {
         const List items = as_list(v, c);
         return items.empty() ? Value() : items.front();
       }},
      {"float", float_filter},
      {"from_json", from_json_filter},
      {"format", format},
      {"indent", indent},
      {"int", int_filter},
      {"items",
       [](const Value& v, Call& c) {
         if (v.is_undefined()) return Value::list({});
         if (!v.is_mapping()) throw Error(c.line, "items: not a mapping");
         List pairs;
         const Object& o = v.object();
         for (size_t i = 0; i < o.entries.size(); ++i)
           pairs.push_back(Value::tuple({o.key(i), o.entries[i].second}));
         return Value::generator(std::move(pairs));
       }},
      {"join", join_filter},
      {"last",
       [](const Value& v, Call& c) {
         const List items = as_list(v, c);
         return items.empty() ? Value() : items.back();
       }},
      {"list", [](const Value& v, Call& c) { return Value::list(as_list(v, c)); }},
      {"lower", [](const Value& v, Call&) { return Value(change_case(as_text(v), Case::lower)); }},
      {"map", map_filter},
      {"max", [](const Value& v, Call& c) { return extreme(v, c, true); }},
      {"min", [](const Value& v, Call& c) { return extreme(v, c, false); }},
      {"reject", [](const Value& v, Call& c) { return pick(v, c, false, false); }},
      {"rejectattr", [](const Value& v, Call& c) { return pick(v, c, false, true); }},
      {"replace",
       [](const Value& v, Call& c) {
         const Value& count = c.arg(2, "count");
         Text t = replace(as_text(v), as_text(c.arg(0, "old")).bytes, as_text(c.arg(1, "new")),
                          count.is_number() ? count.integer() : -1);
         c.in->check_size(t.bytes.size());
         return Value(std::move(t));
       }},
      {"reverse",
       [](const Value& v, Call& c) {
         if (v.is(Kind::string)) {
           const auto at = code_point_offsets(v.str());
           Text out;
           for (size_t i = at.size() - 1; i > 0; --i)
             out.append(v.text().sub(at[i - 1], at[i] - at[i - 1]));
           return Value(std::move(out));
         }
         List items = as_list(v, c);
         std::reverse(items.begin(), items.end());
         return Value::list(std::move(items));
       }},
      {"round", round_filter},
      {"safe", [](const Value& v, Call&) { return Value::markup(as_text(v)); }},
      {"select", [](const Value& v, Call& c) { return pick(v, c, true, false); }},
      {"selectattr", [](const Value& v, Call& c) { return pick(v, c, true, true); }},
      {"sort", sort_filter},
      {"string", [](const Value& v, Call&) { return v.is(Kind::string) ? v : Value(to_text(v)); }},
      {"sum",
       [](const Value& v, Call& c) {
         const Value& attribute = c.arg(0, "attribute");
         Value acc = c.has(1, "start") ? c.arg(1, "start") : Value(int64_t{0});
         for (const Value& x : as_list(v, c)) {
           const Value y = attribute.is_undefined() ? x : path(x, attribute);
           if (!y.is_number() || !acc.is_number()) throw Error(c.line, "sum: not a number");
           if (acc.is(Kind::real) || y.is(Kind::real))
             acc = Value(acc.real() + y.real());
           else
             acc = Value(acc.integer() + y.integer());
         }
         return acc;
       }},
      {"title", [](const Value& v, Call&) { return Value(change_case(as_text(v), Case::title)); }},
      {"tojson", tojson},
      {"trim",
       [](const Value& v, Call& c) {
         const Value& chars = c.arg(0, "chars");
         const std::string set = chars.is(Kind::string) ? chars.str() : "";
         return Value(strip(as_text(v), chars.is(Kind::string) ? &set : nullptr, Side::both));
       }},
      {"truncate",
       [](const Value& v, Call& c) {
         const Text s = as_text(v);
         const int64_t length = c.has(0, "length") ? c.arg(0, "length").integer() : 255;
         const bool killwords = flag(c, 1, "killwords");
         const Text end = c.has(2, "end") ? as_text(c.arg(2, "end")) : Text("...");
         const int64_t leeway = c.has(3, "leeway") ? c.arg(3, "leeway").integer() : 5;
         const auto at = code_point_offsets(s.bytes);
         const auto n = static_cast<int64_t>(at.size()) - 1;
         if (n <= length + leeway) return Value(s);
         const int64_t keep =
             std::max<int64_t>(0, length - static_cast<int64_t>(code_point_count(end.bytes)));
         Text out = s.sub(0, at[static_cast<size_t>(keep)]);
         if (!killwords) {
           const size_t sp = out.bytes.rfind(' ');
           if (sp != std::string::npos) out = out.sub(0, sp);
         }
         out.append(end);
         return Value(std::move(out));
       }},
      {"unique", unique},
      {"upper", [](const Value& v, Call&) { return Value(change_case(as_text(v), Case::upper)); }},
      {"wordcount",
       [](const Value& v, Call&) {
         int64_t n = 0;
         bool in_word = false;
         for (unsigned char ch : as_text(v).bytes) {
           const bool w = ch == '_' || ch >= 0x80 || (ch >= '0' && ch <= '9') ||
                          ((ch | 32) >= 'a' && (ch | 32) <= 'z');
           n += w && !in_word;
           in_word = w;
         }
         return Value(n);
       }},
  };
  return f;
}

}  // namespace

bool is_filter(std::string_view name) {
  return filters().count(name) > 0 || name == "d" || name == "e" || name == "length";
}

Value apply_filter(std::string_view name, const Value& v, Call& c) {
  if (name == "d") name = "default";
  if (name == "e") name = "escape";
  if (name == "length") name = "count";
  auto it = filters().find(name);
  if (it == filters().end()) throw Error(c.line, "no filter named '" + std::string(name) + "'");
  return it->second(v, c);
}

}  // namespace sy::jinja
