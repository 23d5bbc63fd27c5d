// Typed parameters of a plugin: one declaration per key gives its member, type and range, and
// serves parsing, the unknown-key refusal and its list of known keys.
//
//   struct Options { uint32_t max_batch = 8; double wait_ms = 10; bool greedy = true; };
//   static void declare(sy::plugin::Params<Options>& p) {
//     p.add("max_batch", &Options::max_batch, 1, 65536);
//     p.add("wait_ms", &Options::wait_ms, 0.0, 1e6);
//     p.add("greedy", &Options::greedy);
//   }
//
// parse() throws Error(SY_ERR_INVALID_ARG, ...) with "<plugin>: unknown parameter 'k' (known:
// a, b)" or "<plugin>: bad value 'v' for k" (plus " (expected x, y or z)" for a choice).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "switchyard/sdk/plugin.h"

namespace sy::plugin {

inline bool parse_uint(const char* text, uint64_t lo, uint64_t hi, uint64_t& out) {
  if (!text || !*text || text[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end || errno == ERANGE || v < lo || v > hi) return false;
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

template <class Options>
class Params {
 public:
  explicit Params(const char* plugin) : plugin_(plugin) {}

  // An unsigned integer member in [lo, hi].
  template <class T>
    requires(std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
  void add(const char* key, T Options::*member, uint64_t lo, uint64_t hi) {
    keys_.push_back({key,
                     [member, lo, hi](Options& o, const char* text) {
                       uint64_t v = 0;
                       return parse_uint(text, lo, hi, v) &&
                              ((o.*member = static_cast<T>(v)), true);
                     },
                     {}});
  }
  // A floating-point member in [lo, hi].
  void add(const char* key, double Options::*member, double lo, double hi) {
    keys_.push_back({key,
                     [member, lo, hi](Options& o, const char* text) {
                       return parse_double(text, lo, hi, o.*member);
                     },
                     {}});
  }
  // A flag: true, false, 1 or 0.
  void add(const char* key, bool Options::*member) {
    keys_.push_back(
        {key, [member](Options& o, const char* text) { return parse_bool(text, o.*member); }, {}});
  }
  // One of a few named values.
  template <class T>
  void choice(const char* key, T Options::*member,
              std::initializer_list<std::pair<const char*, T>> values) {
    std::vector<std::pair<std::string, T>> named(values.begin(), values.end());
    std::string expected;
    for (size_t i = 0; i < named.size(); ++i)
      expected += (i == 0 ? "" : i + 1 == named.size() ? " or " : ", ") + named[i].first;
    keys_.push_back({key,
                     [member, named](Options& o, const char* text) {
                       for (const auto& [name, value] : named)
                         if (text && name == text) return (o.*member = value), true;
                       return false;
                     },
                     " (expected " + expected + ")"});
  }

  // Applies every parameter to `o`; throws Error naming the plugin, the key and the value.
  void parse(const sy_param* params, size_t n, Options& o) const {
    if (n > 0 && !params)
      throw Error(SY_ERR_INVALID_ARG, std::string(plugin_) + ": params is NULL");
    for (size_t i = 0; i < n; ++i) {
      const sy_param& p = params[i];
      const Key* key = find(p.key);
      if (!key) throw Error(SY_ERR_INVALID_ARG, unknown(p.key));
      if (!key->apply(o, p.value))
        throw Error(SY_ERR_INVALID_ARG, std::string(plugin_) + ": bad value '" +
                                            (p.value ? p.value : "") + "' for " + p.key +
                                            key->hint);
    }
  }

 private:
  struct Key {
    const char* name;
    std::function<bool(Options&, const char*)> apply;
    std::string hint;  // appended to a bad-value message
  };
  const Key* find(const char* name) const {
    for (const Key& k : keys_)
      if (name && !std::strcmp(name, k.name)) return &k;
    return nullptr;
  }
  std::string unknown(const char* name) const {
    std::string known;
    for (const Key& k : keys_) known += (known.empty() ? "" : ", ") + std::string(k.name);
    return std::string(plugin_) + ": unknown parameter '" + (name ? name : "") +
           "' (known: " + known + ")";
  }
  const char* plugin_;
  std::vector<Key> keys_;
};

}  // namespace sy::plugin
