// tojson as transformers defines it: json.dumps(x, ensure_ascii=False, ...), so non-ASCII text
// passes through and only quotes, backslashes and control characters are escaped.
#include <algorithm>
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/strings.h"
#include "jinja/utf8.h"

namespace sy::jinja {
namespace {

void quote(std::string& out, std::string_view s, bool ascii) {
  out += '"';
  const auto at = ascii ? code_point_offsets(s) : std::vector<size_t>{};
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (ascii && c >= 0x80) {  // \uXXXX, astral code points as surrogate pairs
      const size_t end = *std::upper_bound(at.begin(), at.end(), i);
      uint32_t cp = end - i == 1 ? c : c & (0xFF >> (end - i + 1));
      for (size_t k = i + 1; k < end; ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[k]) & 0x3F);
      char h[16];
      if (cp >= 0x10000) {
        cp -= 0x10000;
        snprintf(h, sizeof h, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      } else {
        snprintf(h, sizeof h, "\\u%04x", cp);
      }
      out += h;
      i = end - 1;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char h[8];
          snprintf(h, sizeof h, "\\u%04x", c);
          out += h;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

struct Writer {
  const JsonStyle& style;
  std::string out;
  int depth = 0;

  void newline(int level) {
    out += '\n';
    for (int i = 0; i < level; ++i) out += style.indent_text;
  }

  void value(const Value& v) {
    if (++depth > 256) throw Error(0, "tojson: nesting too deep");
    if (out.size() > style.limit)
      throw Error(0, "the render grew past " + std::to_string(style.limit) + " bytes");
    const bool pretty = style.indent >= 0;
    const std::string item_sep = !style.item_sep.empty() ? style.item_sep : pretty ? "," : ", ";
    const std::string key_sep = !style.key_sep.empty() ? style.key_sep : ": ";
    switch (v.kind()) {
      case Kind::none:
        out += "null";
        break;
      case Kind::boolean:
        out += v.boolean() ? "true" : "false";
        break;
      case Kind::integer:
        out += std::to_string(v.integer());
        break;
      case Kind::real: {
        const double d = v.real();
        out += std::isnan(d)   ? "NaN"
               : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity")
                               : float_repr(d);
        break;
      }
      case Kind::string:
        quote(out, v.str(), style.ensure_ascii);
        break;
      case Kind::list: {
        if (v.is_generator())
          throw Error(0, "tojson: Object of type generator is not JSON serializable");
        if (v.items().empty()) {
          out += "[]";
          break;
        }
        out += '[';
        for (size_t i = 0; i < v.items().size(); ++i) {
          if (i) out += item_sep;
          if (pretty) newline(depth);
          value(v.items()[i]);
        }
        if (pretty) newline(depth - 1);
        out += ']';
        break;
      }
      case Kind::dict:
      case Kind::space: {
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& e : v.object().entries) entries.push_back(&e);
        if (style.sort_keys)
          std::stable_sort(entries.begin(), entries.end(),
                           [](auto* a, auto* b) { return a->first < b->first; });
        if (entries.empty()) {
          out += "{}";
          break;
        }
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i) out += item_sep;
          if (pretty) newline(depth);
          quote(out,
                to_text(v.object().key(static_cast<size_t>(entries[i] - v.object().entries.data())))
                    .bytes,
                style.ensure_ascii);
          out += key_sep;
          value(entries[i]->second);
        }
        if (pretty) newline(depth - 1);
        out += '}';
        break;
      }
      case Kind::undefined:
        throw Error(0, "tojson: Object of type Undefined is not JSON serializable");
      default:
        throw Error(0, "tojson: Object of type " + std::string(v.type_name()) +
                           " is not JSON serializable");
    }
    --depth;
  }
};

}  // namespace

Text to_json(const Value& v, const JsonStyle& style) {
  JsonStyle s = style;
  if (s.indent >= 0 && s.indent_text.empty())
    s.indent_text = std::string(static_cast<size_t>(s.indent), ' ');
  Writer w{s, {}, 0};
  w.value(v);
  if (w.out.size() > s.limit)
    throw Error(0, "the render grew past " + std::to_string(s.limit) + " bytes");
  return Text(std::move(w.out), tainted(v));
}

}  // namespace sy::jinja
