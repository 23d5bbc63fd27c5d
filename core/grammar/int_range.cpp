#include "grammar/int_range.h"

#include <stdexcept>
#include <string_view>
#include <vector>

namespace sy::grammar {
namespace {

constexpr int64_t kLimit = 1'000'000'000'000'000;  // 10^15
constexpr int kMaxDigits = 16;

std::string digits(char lo, char hi) {
  if (lo == hi) return std::string("\"") + lo + "\"";
  if (lo == '0' && hi == '9') return "[0-9]";
  return std::string("[") + lo + "-" + hi + "]";
}

std::string join(const std::vector<std::string>& alts) {
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

// Digit strings of one length n from lo to hi (leading zeros allowed: they are suffixes).
std::string same_length(std::string_view lo, std::string_view hi) {
  const size_t n = lo.size();
  if (n == 0) return "";
  if (lo.front() == hi.front()) {
    const std::string rest = same_length(lo.substr(1), hi.substr(1));
    return digits(lo.front(), lo.front()) + (rest.empty() ? "" : " " + rest);
  }
  if (lo.substr(1).find_first_not_of('0') == std::string_view::npos &&
      hi.substr(1).find_first_not_of('9') == std::string_view::npos)  // every suffix
    return digits(lo.front(), hi.front()) + (n > 1 ? " [0-9]{" + std::to_string(n - 1) + "}" : "");
  const std::string nines(n - 1, '9'), zeros(n - 1, '0');
  std::vector<std::string> alts;
  alts.push_back(same_length(lo, std::string(1, lo.front()) + nines));
  if (hi.front() - lo.front() > 1)
    alts.push_back(digits(char(lo.front() + 1), char(hi.front() - 1)) + " [0-9]{" +
                   std::to_string(n - 1) + "}");
  alts.push_back(same_length(std::string(1, hi.front()) + zeros, hi));
  return join(alts);
}

// The naturals from lo to hi (none: unbounded), written without leading zeros.
std::string naturals(int64_t lo, std::optional<int64_t> hi) {
  const std::string a = std::to_string(lo);
  const size_t top = hi ? std::to_string(*hi).size() : kMaxDigits;
  std::vector<std::string> alts;
  for (size_t n = a.size(); n <= top; ++n) {
    const std::string from = n == a.size() ? a : "1" + std::string(n - 1, '0');
    const std::string to = hi && n == top ? std::to_string(*hi) : std::string(n, '9');
    if (n == 1 && from == "0" && to == "0") {
      alts.push_back("\"0\"");
      continue;
    }
    alts.push_back(same_length(from, to));
  }
  return join(alts);
}

}  // namespace

std::string int_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  for (const auto& b : {lo, hi})
    if (b && (*b >= kLimit || *b <= -kLimit))
      throw std::invalid_argument("bounds must lie within (-10^15, 10^15)");
  if (lo && hi && *lo > *hi) throw std::invalid_argument("the range holds no integer");
  std::vector<std::string> alts;
  if (!lo || *lo < 0) {  // the negatives: "-" and a magnitude from max(1, -hi) up to -lo
    const int64_t from = hi && *hi < 0 ? -*hi : 1;
    alts.push_back("\"-\" " + naturals(from, lo ? std::optional<int64_t>(-*lo) : std::nullopt));
  }
  if (!hi || *hi >= 0) alts.push_back(naturals(lo && *lo > 0 ? *lo : 0, hi));
  return join(alts);
}

}  // namespace sy::grammar
