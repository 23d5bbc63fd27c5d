#include "jinja/strings.h"

#include <algorithm>

#include "jinja/error.h"
#include "jinja/utf8.h"

namespace sy::jinja {
namespace {

uint32_t decode(std::string_view s, size_t at, size_t end) {
  const auto c = static_cast<unsigned char>(s[at]);
  const size_t n = end - at;
  if (n == 1) return c;
  uint32_t cp = c & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[at + k]) & 0x3F);
  return cp;
}

// str.isspace() for one code point.
bool white(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool line_break(uint32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

struct Cps {
  std::vector<size_t> at;
  std::vector<uint32_t> cp;
  explicit Cps(std::string_view s) : at(code_point_offsets(s)) {
    cp.reserve(at.size());
    for (size_t i = 0; i + 1 < at.size(); ++i) cp.push_back(decode(s, at[i], at[i + 1]));
  }
  size_t size() const { return cp.size(); }
};

uint32_t to_upper(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x17F && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c % 2 == 0) ? c - 1 : c;
    return (c % 2 == 1) ? c - 1 : c;
  }
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x3AC && c <= 0x3AF) return c == 0x3AC ? 0x386 : c - 37;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

uint32_t to_lower(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x138 && c != 0x149 && c != 0x17F) {
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c % 2 == 1) ? c + 1 : c;
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

bool cased(uint32_t c) {
  return to_upper(c) != c || to_lower(c) != c;
}

}  // namespace

Text strip(const Text& s, const std::string* chars, Side side) {
  const Cps cps(s.bytes);
  std::vector<uint32_t> set;
  if (chars) {
    const Cps c(*chars);
    set = c.cp;
  }
  auto drop = [&](uint32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : white(c);
  };
  size_t b = 0, e = cps.size();
  if (side != Side::right)
    while (b < e && drop(cps.cp[b])) ++b;
  if (side != Side::left)
    while (e > b && drop(cps.cp[e - 1])) --e;
  return s.sub(cps.at[b], cps.at[e] - cps.at[b]);
}

List split(const Text& s, const std::string* sep, int64_t maxsplit, bool from_right) {
  List out;
  if (sep) {
    const std::string& d = *sep;
    if (d.empty()) return out;
    std::vector<size_t> cuts;
    if (!from_right) {
      for (size_t p = s.bytes.find(d);
           p != std::string::npos && (maxsplit < 0 || static_cast<int64_t>(cuts.size()) < maxsplit);
           p = s.bytes.find(d, p + d.size()))
        cuts.push_back(p);
    } else {
      size_t end = s.bytes.size();
      while (end >= d.size() && (maxsplit < 0 || static_cast<int64_t>(cuts.size()) < maxsplit)) {
        const size_t p = s.bytes.rfind(d, end - d.size());
        if (p == std::string::npos) break;
        cuts.push_back(p);
        end = p;
      }
      std::reverse(cuts.begin(), cuts.end());
    }
    size_t from = 0;
    for (size_t p : cuts) {
      out.emplace_back(s.sub(from, p - from));
      from = p + d.size();
    }
    out.emplace_back(s.sub(from));
    return out;
  }
  // Runs of whitespace, none at the ends.
  const Cps cps(s.bytes);
  std::vector<std::pair<size_t, size_t>> words;
  for (size_t i = 0; i < cps.size();) {
    while (i < cps.size() && white(cps.cp[i])) ++i;
    if (i == cps.size()) break;
    size_t j = i;
    while (j < cps.size() && !white(cps.cp[j])) ++j;
    words.emplace_back(i, j);
    i = j;
  }
  if (maxsplit >= 0 && static_cast<int64_t>(words.size()) > maxsplit + 1) {
    if (!from_right) {
      size_t last = static_cast<size_t>(maxsplit);
      size_t e = cps.size();
      while (e > words[last].first && white(cps.cp[e - 1])) --e;
      words[last].second = e;
      words.resize(last + 1);
    } else {
      const size_t first = words.size() - static_cast<size_t>(maxsplit) - 1;
      size_t b = 0;
      while (b < words[first].second && white(cps.cp[b])) ++b;
      words[first].first = b;
      words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(first));
    }
  }
  for (auto [i, j] : words) out.emplace_back(s.sub(cps.at[i], cps.at[j] - cps.at[i]));
  return out;
}

List splitlines(const Text& s, bool keepends) {
  const Cps cps(s.bytes);
  List out;
  size_t start = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    if (!line_break(cps.cp[i])) continue;
    size_t end = i + 1;
    if (cps.cp[i] == '\r' && i + 1 < cps.size() && cps.cp[i + 1] == '\n') end = i + 2;
    const size_t stop = keepends ? end : i;
    out.emplace_back(s.sub(cps.at[start], cps.at[stop] - cps.at[start]));
    start = end;
    i = end - 1;
  }
  if (start < cps.size()) out.emplace_back(s.sub(cps.at[start]));
  return out;
}

Text replace(const Text& s, std::string_view old, const Text& with, int64_t count) {
  Text out;
  if (old.empty()) {  // Python inserts `with` around every code point
    const auto at = code_point_offsets(s.bytes);
    int64_t n = 0;
    for (size_t i = 0; i + 1 < at.size(); ++i) {
      if (count < 0 || n++ < count) out.append(with);
      out.append(s.sub(at[i], at[i + 1] - at[i]));
    }
    if (count < 0 || n < count) out.append(with);
    return out;
  }
  size_t from = 0;
  int64_t n = 0;
  for (size_t p = s.bytes.find(old); p != std::string::npos && (count < 0 || n < count);
       p = s.bytes.find(old, from), ++n) {
    out.append(s.sub(from, p - from));
    out.append(with);
    from = p + old.size();
  }
  out.append(s.sub(from));
  return out;
}

Text change_case(const Text& s, Case c) {
  const Cps cps(s.bytes);
  std::string b;
  b.reserve(s.bytes.size());
  bool prev_cased = false;
  Text out;
  for (size_t i = 0; i < cps.size(); ++i) {
    const uint32_t x = cps.cp[i];
    uint32_t y = x;
    switch (c) {
      case Case::upper:
        y = to_upper(x);
        break;
      case Case::lower:
        y = to_lower(x);
        break;
      case Case::swap:
        y = to_upper(x) != x ? to_upper(x) : to_lower(x);
        break;
      case Case::capitalize:
        y = i == 0 ? to_upper(x) : to_lower(x);
        break;
      case Case::title:
        y = prev_cased ? to_lower(x) : to_upper(x);
        break;
    }
    prev_cased = cased(x);
    const Text piece = s.sub(cps.at[i], cps.at[i + 1] - cps.at[i]);
    if (y == x) {
      out.append(piece);
    } else {
      std::string enc;
      append_utf8(enc, y);
      if (piece.tainted())
        out.append_data(enc);
      else
        out.append(enc);
    }
  }
  return out;
}

bool in_case(const Text& s, Case c) {
  const Case other = c == Case::lower ? Case::upper : Case::lower;
  return change_case(s, c).bytes == s.bytes && change_case(s, other).bytes != s.bytes;
}

Text html_escape(const Text& s) {
  Text out;
  size_t from = 0;
  for (size_t i = 0; i < s.bytes.size(); ++i) {
    const char* r = nullptr;
    switch (s.bytes[i]) {
      case '&':
        r = "&amp;";
        break;
      case '<':
        r = "&lt;";
        break;
      case '>':
        r = "&gt;";
        break;
      case '"':
        r = "&#34;";
        break;
      case '\'':
        r = "&#39;";
        break;
      default:
        continue;
    }
    out.append(s.sub(from, i - from));
    if (s.sub(i, 1).tainted())
      out.append_data(r);
    else
      out.append(r);
    from = i + 1;
  }
  out.append(s.sub(from));
  return out;
}

Text join(const List& items, const Text& sep, size_t limit) {
  Text out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.append(sep);
    out.append(to_text(items[i], limit));
    if (out.bytes.size() > limit)
      throw Error(0, "the render grew past " + std::to_string(limit) + " bytes");
  }
  return out;
}

bool tainted(const Value& v) {
  switch (v.kind()) {
    case Kind::string:
      return v.text().tainted();
    case Kind::list:
      return std::any_of(v.items().begin(), v.items().end(),
                         [](const Value& x) { return tainted(x); });
    case Kind::dict:
    case Kind::space:
      if (v.object().data_keys && !v.object().entries.empty()) return true;
      for (const auto& [k, x] : v.object().entries)
        if (tainted(x)) return true;
      return false;
    default:
      return false;
  }
}

}  // namespace sy::jinja
