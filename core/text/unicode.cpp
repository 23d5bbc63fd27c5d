// Look-ups in the generated Unicode tables, and UTF-8 coding.
#include "text/unicode.h"

#include <algorithm>
#include <array>

namespace sy::text::detail {

GeneralCategory general_category(uint32_t cp) {
  if (cp >= 0x110000) return GeneralCategory::Cn;
  const CategoryRange* end = kCategoryRanges + kCategoryRangeCount;
  const CategoryRange* it = std::upper_bound(
      kCategoryRanges, end, cp, [](uint32_t c, const CategoryRange& r) { return c < r.start; });
  return (it - 1)->category;
}

bool is_white_space(uint32_t cp) {
  for (size_t i = 0; i < kWhiteSpaceCount; ++i)
    if (cp >= kWhiteSpace[i].first && cp <= kWhiteSpace[i].last) return true;
  return false;
}

uint32_t category_mask(std::string_view name) {
  using G = GeneralCategory;
  static constexpr std::array<const char*, kCategoryCount> names = {
      "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
      "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
  if (name == "LC" || name == "L&")
    return category_bit(G::Lu) | category_bit(G::Ll) | category_bit(G::Lt);
  uint32_t mask = 0;
  for (int i = 0; i < kCategoryCount; ++i) {
    const std::string_view n = names[i];
    // A one-letter name is the whole major class; C takes in Cn as Unicode's \p{C} does.
    if (n == name || (name.size() == 1 && n[0] == name[0])) mask |= 1u << i;
  }
  return mask;
}

uint32_t decode_utf8(std::string_view s, size_t pos, size_t& len) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[pos + i]); };
  const unsigned char c = b(0);
  len = 1;
  if (c < 0x80) return c;
  const size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || pos + n > s.size()) return 0xFFFD;
  uint32_t cp = c & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  len = n;
  return cp;
}

std::vector<uint32_t> decode_utf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0, len; i < s.size(); i += len) out.push_back(decode_utf8(s, i, len));
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

}  // namespace sy::text::detail
