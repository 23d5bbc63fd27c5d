// Normalization Form C (Unicode Standard Annex #15): decompose canonically (the table's pairs
// recursively, Hangul syllables by arithmetic), put each run of combining marks in canonical
// order, then compose every pair that is not blocked and not excluded.
#include <algorithm>
#include <unordered_map>

#include "text/unicode.h"

namespace sy::text::detail {

namespace {

// Hangul syllables (UAX #15, section 3.12): S = SBase + (L * VCount + V) * TCount + T.
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

uint8_t combining_class(uint32_t cp) {
  const CombiningClass* end = kCombiningClasses + kCombiningClassCount;
  const CombiningClass* it = std::lower_bound(
      kCombiningClasses, end, cp, [](const CombiningClass& c, uint32_t v) { return c.cp < v; });
  return it != end && it->cp == cp ? it->ccc : 0;
}

const Decomposition* decomposition(uint32_t cp) {
  const Decomposition* end = kDecompositions + kDecompositionCount;
  const Decomposition* it = std::lower_bound(
      kDecompositions, end, cp, [](const Decomposition& d, uint32_t v) { return d.cp < v; });
  return it != end && it->cp == cp ? it : nullptr;
}

void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + s % kNCount / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const Decomposition* d = decomposition(cp);
  if (!d) {
    out.push_back(cp);
    return;
  }
  decompose(d->first, out);
  if (d->second) decompose(d->second, out);
}

// (first << 21 | second) -> the composite, for the pairs that compose.
const std::unordered_map<uint64_t, uint32_t>& compositions() {
  static const std::unordered_map<uint64_t, uint32_t> m = [] {
    std::unordered_map<uint64_t, uint32_t> c;
    for (size_t i = 0; i < kDecompositionCount; ++i) {
      const Decomposition& d = kDecompositions[i];
      if (d.composes && d.second) c.emplace((uint64_t)d.first << 21 | d.second, d.cp);
    }
    return c;
  }();
  return m;
}

// The composite of a starter and the character after it, or 0.
uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto& m = compositions();
  const auto it = m.find((uint64_t)a << 21 | b);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

std::vector<uint32_t> nfc(std::vector<uint32_t> cps) {
  // Below U+0300 every code point is its own NFC and composes with nothing before it.
  if (std::all_of(cps.begin(), cps.end(), [](uint32_t c) { return c < 0x300; })) return cps;
  std::vector<uint32_t> d;
  d.reserve(cps.size());
  for (uint32_t cp : cps) decompose(cp, d);
  // Canonical order: a stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + i, d.begin() + j, [](uint32_t a, uint32_t b) {
      return combining_class(a) < combining_class(b);
    });
    i = j;
  }
  // Compose: each character joins the last starter unless a character between them blocks it
  // (one of the same or a higher class, or a starter).
  std::vector<uint32_t> out;
  out.reserve(d.size());
  size_t starter = SIZE_MAX;  // index in out of the last starter
  int last_class = -1;        // class of the last character appended after it (-1: none)
  for (uint32_t cp : d) {
    const int cc = combining_class(cp);
    if (starter != SIZE_MAX && (last_class < cc || (last_class == -1 && cc == 0))) {
      if (const uint32_t c = compose(out[starter], cp)) {
        out[starter] = c;
        continue;
      }
    }
    if (cc == 0) {
      starter = out.size();
      last_class = -1;
    } else {
      last_class = cc;
    }
    out.push_back(cp);
  }
  return out;
}

}  // namespace sy::text::detail
