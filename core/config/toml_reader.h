// Reads TOML tables with errors that name the file, line, column and key (TOML++).
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <toml++/toml.h>
#include <vector>
#include <filesystem>

#include "config/config.h"

namespace sy {

inline std::string where(const std::string& origin, const toml::source_region& src) {
  return origin + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

// Reads one table, refusing keys it does not know so that typos do not pass silently.
class TableReader {
 public:
  TableReader(const std::string& origin, const toml::table& t, std::string prefix)
      : origin_(origin), t_(t), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& what) const {
    throw ConfigError(where(origin_, n.source()) + ": " + prefix_ + key + ": " + what);
  }

  template <typename T>
  void read_int(const char* key, T& out, int64_t lo, int64_t hi) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return;
    auto v = n->value_exact<int64_t>();
    if (!v) fail(*n, key, std::string("expected an integer, got ") + type_name(*n));
    if (*v < lo || *v > hi)
      fail(*n, key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                        std::to_string(*v));
    out = static_cast<T>(*v);
  }
  void read_float(const char* key, float& out, double lo, double hi) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return;
    auto v = n->value<double>();  // integers convert
    if (!v || n->is_boolean()) fail(*n, key, std::string("expected a number, got ") + type_name(*n));
    if (*v < lo || *v > hi) {
      std::ostringstream os;
      os << "must be in [" << lo << ", " << hi << "], got " << *v;
      fail(*n, key, os.str());
    }
    out = static_cast<float>(*v);
  }
  void read_string(const char* key, std::string& out, bool required = false) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) {
      if (required)
        throw ConfigError(where(origin_, t_.source()) + ": " + prefix_ + key +
                          ": required key is missing");
      return;
    }
    auto v = n->value_exact<std::string>();
    if (!v) fail(*n, key, std::string("expected a string, got ") + type_name(*n));
    out = *v;
  }
  void read_bool(const char* key, bool& out) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return;
    auto v = n->value_exact<bool>();
    if (!v) fail(*n, key, std::string("expected a boolean, got ") + type_name(*n));
    out = *v;
  }
  void read_string_array(const char* key, std::vector<std::filesystem::path>& out) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return;
    const toml::array* a = n->as_array();
    if (!a) fail(*n, key, std::string("expected an array of strings, got ") + type_name(*n));
    for (const auto& e : *a) {
      auto v = e.value_exact<std::string>();
      if (!v) fail(e, key, std::string("expected a string element, got ") + type_name(e));
      out.emplace_back(*v);
    }
  }
  void mark(const char* key) { seen_.insert(key); }
  // Every key not read so far becomes a plugin parameter (scalars only).
  void rest_as_params(Params& out) {
    for (const auto& [k, v] : t_) {
      const std::string key(k.str());
      if (seen_.count(key)) continue;
      seen_.insert(key);
      std::string text;
      if (auto s = v.value_exact<std::string>()) text = *s;
      else if (auto i = v.value_exact<int64_t>()) text = std::to_string(*i);
      else if (auto d = v.value_exact<double>()) {
        std::ostringstream os;
        os << *d;
        text = os.str();
      } else if (auto b = v.value_exact<bool>()) text = *b ? "true" : "false";
      else fail(v, key, std::string("plugin parameters must be scalars, got ") + type_name(v));
      out.emplace_back(key, text);
    }
  }
  void reject_unknown() const {
    for (const auto& [k, v] : t_) {
      const std::string key(k.str());
      if (!seen_.count(key))
        throw ConfigError(where(origin_, k.source()) + ": " + prefix_ + key + ": unknown key");
    }
  }
  static const char* type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string: return "string";
      case toml::node_type::integer: return "integer";
      case toml::node_type::floating_point: return "float";
      case toml::node_type::boolean: return "boolean";
      case toml::node_type::array: return "array";
      case toml::node_type::table: return "table";
      default: return "date/time";
    }
  }

 private:
  const std::string& origin_;
  const toml::table& t_;
  std::string prefix_;
  std::set<std::string> seen_;
};

// t[key] as a table, or null when absent; ConfigError naming prefix + key when it is not a table.
inline const toml::table* table_at(const std::string& origin, const toml::table& t,
                                   const char* key, const std::string& prefix = "") {
  const toml::node* n = t.get(key);
  if (!n) return nullptr;
  if (!n->is_table())
    throw ConfigError(where(origin, n->source()) + ": " + prefix + key +
                      ": expected a table, got " + TableReader::type_name(*n));
  return n->as_table();
}

// Parses TOML text; a syntax error becomes ConfigError("<origin>:<line>:<col>: syntax error: ...").
toml::table parse_toml(const std::string& text, const std::string& origin);
// parse_config on an already parsed table (e.g. one [[variants]] entry of a compare file): its
// nodes keep their source positions, so errors still name origin:line:col.
Config parse_config(const toml::table& root, const std::string& origin);
// Reads a whole file; ConfigError("<path>: cannot open ...") when it cannot.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace sy
