#include "jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "jinja/call.h"
#include "jinja/error.h"

namespace sy::jinja {

Text::Text(std::string b, bool from_data) : bytes(std::move(b)) {
  if (from_data && !bytes.empty()) data.push_back({0, static_cast<uint32_t>(bytes.size())});
}

void Text::append(const Text& t) {
  const auto base = static_cast<uint32_t>(bytes.size());
  bytes += t.bytes;
  for (const Span& s : t.data) {
    if (!data.empty() && data.back().end == base + s.begin)
      data.back().end = base + s.end;
    else
      data.push_back({base + s.begin, base + s.end});
  }
}

void Text::append_data(std::string_view b) {
  if (b.empty()) return;
  const auto base = static_cast<uint32_t>(bytes.size());
  bytes += b;
  if (!data.empty() && data.back().end == base)
    data.back().end = static_cast<uint32_t>(bytes.size());
  else
    data.push_back({base, static_cast<uint32_t>(bytes.size())});
}

Text Text::sub(size_t pos, size_t len) const {
  pos = std::min(pos, bytes.size());
  len = std::min(len, bytes.size() - pos);
  Text t;
  t.bytes = bytes.substr(pos, len);
  const auto b = static_cast<uint32_t>(pos), e = static_cast<uint32_t>(pos + len);
  for (const Span& s : data) {
    const uint32_t lo = std::max(s.begin, b), hi = std::min(s.end, e);
    if (lo < hi) t.data.push_back({lo - b, hi - b});
  }
  return t;
}

Text Text::with_bytes(std::string b) const {
  Text t;
  t.bytes = std::move(b);
  t.data = data;
  return t;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::none;
  return v;
}

Value::Value(bool b) : kind_(Kind::boolean), b_(b) {}
Value::Value(int64_t i) : kind_(Kind::integer), i_(i) {}
Value::Value(double d) : kind_(Kind::real), d_(d) {}
Value::Value(Text t) : kind_(Kind::string), s_(std::make_shared<const Text>(std::move(t))) {}

Value Value::list(List items) {
  Value v;
  v.kind_ = Kind::list;
  v.l_ = std::make_shared<const List>(std::move(items));
  return v;
}

Value Value::tuple(List items) {
  Value v = list(std::move(items));
  v.shape_ = Shape::tuple;
  return v;
}

Value Value::generator(List items) {
  Value v = list(std::move(items));
  v.shape_ = Shape::generator;
  return v;
}

Value Value::markup(Text t) {
  Value v(std::move(t));
  v.shape_ = Shape::markup;
  return v;
}

Value Value::dict(std::shared_ptr<Object> o) {
  Value v;
  v.kind_ = Kind::dict;
  v.o_ = std::move(o);
  return v;
}

Value Value::space(std::shared_ptr<Object> o) {
  Value v;
  v.kind_ = Kind::space;
  v.o_ = std::move(o);
  return v;
}

Value Value::function(std::string name, Function f) {
  Value v;
  v.kind_ = Kind::function;
  v.f_ = std::make_shared<const std::pair<std::string, Function>>(std::move(name), std::move(f));
  return v;
}

int64_t Value::integer() const {
  switch (kind_) {
    case Kind::boolean:
      return b_ ? 1 : 0;
    case Kind::integer:
      return i_;
    case Kind::real:
      if (!std::isfinite(d_) || std::fabs(d_) >= 9.2e18) throw Error(0, "float out of range");
      return static_cast<int64_t>(d_);
    default:
      return 0;
  }
}

double Value::real() const {
  switch (kind_) {
    case Kind::boolean:
      return b_ ? 1 : 0;
    case Kind::integer:
      return static_cast<double>(i_);
    case Kind::real:
      return d_;
    default:
      return 0;
  }
}

const std::string& Value::function_name() const {
  return f_->first;
}
Value Value::call(Call& c) const {
  return f_->second(c);
}

uint64_t Value::weight() const {
  switch (kind_) {
    case Kind::string:
      return s_->bytes.size() / 64;
    case Kind::list:
      return l_->size();
    case Kind::dict:
    case Kind::space:
      return o_->entries.size();
    default:
      return 0;
  }
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::undefined:
    case Kind::none:
      return false;
    case Kind::boolean:
      return b_;
    case Kind::integer:
      return i_ != 0;
    case Kind::real:
      return d_ != 0;
    case Kind::string:
      return !s_->bytes.empty();
    case Kind::list:
      return shape_ == Shape::generator || !l_->empty();
    case Kind::dict:
      return !o_->entries.empty();
    default:
      return true;
  }
}

std::string_view Value::type_name() const {
  switch (kind_) {
    case Kind::undefined:
      return "undefined";
    case Kind::none:
      return "NoneType";
    case Kind::boolean:
      return "bool";
    case Kind::integer:
      return "int";
    case Kind::real:
      return "float";
    case Kind::string:
      return "str";
    case Kind::list:
      return "list";
    case Kind::dict:
      return "dict";
    case Kind::function:
      return "function";
    case Kind::space:
      return "Namespace";
  }
  return "?";
}

const Value* Object::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(std::string key, Value v) {
  for (auto& [k, old] : entries)
    if (k == key) {
      old = std::move(v);
      return;
    }
  if (!keys.empty()) keys.emplace_back(key, data_keys);
  entries.emplace_back(std::move(key), std::move(v));
}

Value Object::key(size_t i) const {
  return i < keys.size() ? keys[i] : Value(entries[i].first, data_keys);
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is(Kind::real) || b.is(Kind::real)) return a.real() == b.real();
    return a.integer() == b.integer();
  }
  if (a.kind() != b.kind()) return false;
  if (a.same(b)) return true;  // one shared string or list: no need to read it
  switch (a.kind()) {
    case Kind::undefined:
    case Kind::none:
      return true;
    case Kind::string:
      return a.str() == b.str();
    case Kind::list: {
      if (a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i)
        if (!equal(a.items()[i], b.items()[i])) return false;
      return true;
    }
    case Kind::dict: {
      const auto& x = a.object().entries;
      if (x.size() != b.object().entries.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* w = b.object().find(k);
        if (!w || !equal(v, *w)) return false;
      }
      return true;
    }
    default:
      return a.object_ptr() == b.object_ptr();
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is(Kind::real) || b.is(Kind::real)) return a.real() < b.real();
    return a.integer() < b.integer();
  }
  if (a.is(Kind::string) && b.is(Kind::string)) return a.str() < b.str();
  if (a.is(Kind::list) && b.is(Kind::list)) {
    const List &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (less(x[i], y[i])) return true;
      if (less(y[i], x[i])) return false;
    }
    return x.size() < y.size();
  }
  throw Error(0, "'<' not supported between instances of '" + std::string(a.type_name()) +
                     "' and '" + std::string(b.type_name()) + "'");
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  // Shortest round-trip digits, then Python's layout: fixed for exponents in [-4, 16).
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const int exp = std::stoi(sci.substr(e + 1));
  std::string mant = sci.substr(0, e);
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
            digits.substr(static_cast<size_t>(exp) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return neg ? "-" + out : out;
}

namespace {

// Python's repr of a str: single quotes unless the text has ' and no ".
void check(const Text& out, size_t limit) {
  if (out.bytes.size() > limit)
    throw Error(0, "the render grew past " + std::to_string(limit) + " bytes");
}

void repr_string(Text& out, const Text& s) {
  const std::string& b = s.bytes;
  const char q = b.find('\'') != std::string::npos && b.find('"') == std::string::npos ? '"' : '\'';
  std::string r(1, q);
  for (unsigned char c : b) {
    if (c == static_cast<unsigned char>(q) || c == '\\') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c == '\n') {
      r += "\\n";
    } else if (c == '\r') {
      r += "\\r";
    } else if (c == '\t') {
      r += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char h[8];
      snprintf(h, sizeof h, "\\x%02x", c);
      r += h;
    } else {
      r += static_cast<char>(c);
    }
  }
  r += q;
  if (s.tainted())
    out.append_data(r);
  else
    out.append(r);
}

void repr(Text& out, const Value& v, size_t limit) {
  check(out, limit);
  switch (v.kind()) {
    case Kind::string:
      repr_string(out, v.text());
      return;
    case Kind::list: {
      if (v.is_generator()) {
        out.append("<generator object>");
        return;
      }
      out.append(v.is_tuple() ? "(" : "[");
      for (size_t i = 0; i < v.items().size(); ++i) {
        if (i) out.append(", ");
        repr(out, v.items()[i], limit);
      }
      if (v.is_tuple() && v.items().size() == 1) out.append(",");
      out.append(v.is_tuple() ? ")" : "]");
      return;
    }
    case Kind::dict: {
      out.append("{");
      const Object& o = v.object();
      for (size_t i = 0; i < o.entries.size(); ++i) {
        if (i) out.append(", ");
        repr(out, o.key(i), limit);
        out.append(": ");
        repr(out, o.entries[i].second, limit);
      }
      out.append("}");
      return;
    }
    default:
      out.append(to_text(v));
  }
  check(out, limit);
}

}  // namespace

Text to_text(const Value& v, size_t limit) {
  switch (v.kind()) {
    case Kind::undefined:
      return Text();
    case Kind::none:
      return Text("None");
    case Kind::boolean:
      return Text(v.boolean() ? "True" : "False");
    case Kind::integer:
      return Text(std::to_string(v.integer()));
    case Kind::real:
      return Text(float_repr(v.real()));
    case Kind::string:
      return v.text();
    case Kind::function:
      return Text("<function " + v.function_name() + ">");
    case Kind::space:
      return Text("<Namespace>");
    default: {
      Text t;
      repr(t, v, limit);
      return t;
    }
  }
}

}  // namespace sy::jinja
