// Parsing of sy_param text values for in-tree scheduler plugins (header only, C ABI types only
// cross the boundary). Each setter returns false with a message naming the key and the value.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "switchyard/abi/types.h"

namespace sy::plugin {

inline bool parse_uint(const char* text, uint64_t lo, uint64_t hi, uint64_t& out) {
  if (!text || !*text || text[0] == '-') return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end || v < lo || v > hi) return false;
  out = v;
  return true;
}

inline bool parse_double(const char* text, double lo, double hi, double& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end || !(v >= lo && v <= hi)) return false;
  out = v;
  return true;
}

inline bool parse_bool(const char* text, bool& out) {
  if (!text) return false;
  if (!std::strcmp(text, "true") || !std::strcmp(text, "1")) return out = true, true;
  if (!std::strcmp(text, "false") || !std::strcmp(text, "0")) return out = false, true;
  return false;
}

inline std::string bad_value(const char* plugin, const sy_param& p) {
  return std::string(plugin) + ": bad value '" + (p.value ? p.value : "") + "' for " + p.key;
}

}  // namespace sy::plugin
