// Parsing of sy_param text values for in-tree plugins (header only, C ABI types only
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

// A plugin's parameter names, in one list that serves both the known-key check and the
// message refusing an unknown key.
template <size_t N>
bool is_known(const char* const (&names)[N], const char* key) {
  for (const char* n : names)
    if (key && !std::strcmp(key, n)) return true;
  return false;
}

template <size_t N>
std::string unknown_param(const char* plugin, const char* key, const char* const (&names)[N]) {
  std::string known;
  for (const char* n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  return std::string(plugin) + ": unknown parameter '" + (key ? key : "") + "' (known: " + known +
         ")";
}

}  // namespace sy::plugin
