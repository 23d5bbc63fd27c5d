// Code points and their Unicode properties, as the pre-tokenizers need them: UTF-8 decoding as
// llama.cpp does it (an invalid byte becomes U+FFFD), the general category of a code point and
// the White_Space property, and NFC, from tables generated from the Unicode Character Database
// (scripts/gen-unicode-table.py).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sy::text::detail {

// Two-letter general categories; Cn (unassigned) is 0.
enum class GeneralCategory : uint8_t {
  Cn,
  Lu,
  Ll,
  Lt,
  Lm,
  Lo,
  Mn,
  Mc,
  Me,
  Nd,
  Nl,
  No,
  Pc,
  Pd,
  Ps,
  Pe,
  Pi,
  Pf,
  Po,
  Sm,
  Sc,
  Sk,
  So,
  Zs,
  Zl,
  Zp,
  Cc,
  Cf,
  Cs,
  Co,
};
constexpr int kCategoryCount = 30;

struct CategoryRange {
  uint32_t start;
  GeneralCategory category;
};
struct CodeRange {
  uint32_t first, last;  // inclusive
};

extern const CategoryRange kCategoryRanges[];
extern const size_t kCategoryRangeCount;
extern const CodeRange kWhiteSpace[];
extern const size_t kWhiteSpaceCount;

struct CombiningClass {
  uint32_t cp;
  uint8_t ccc;
};
struct Decomposition {
  uint32_t cp, first, second;  // second 0: a singleton
  bool composes;               // first + second compose back to cp
};
extern const CombiningClass kCombiningClasses[];
extern const size_t kCombiningClassCount;
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionCount;

GeneralCategory general_category(uint32_t cp);  // Cn beyond U+10FFFF
bool is_white_space(uint32_t cp);

// A bit per category, for sets such as \p{L}: bit (1 << int(category)).
constexpr uint32_t category_bit(GeneralCategory c) {
  return 1u << static_cast<int>(c);
}
// The mask a property name stands for: "L", "Lu", "N", "P", ... and "LC" (Lu|Ll|Lt); 0 when the
// name is unknown.
uint32_t category_mask(std::string_view name);

// One code point a lead byte announces and how long it is; an invalid or truncated sequence
// yields U+FFFD over one byte, as llama.cpp's unicode_cpts_from_utf8 does.
uint32_t decode_utf8(std::string_view s, size_t pos, size_t& len);
std::vector<uint32_t> decode_utf8(std::string_view s);
void append_utf8(std::string& out, uint32_t cp);

// Unicode Normalization Form C (canonical decomposition, canonical order, canonical
// composition), as Hugging Face's NFC normaliser applies it before Qwen's pre-tokenizer.
std::vector<uint32_t> nfc(std::vector<uint32_t> cps);

}  // namespace sy::text::detail
