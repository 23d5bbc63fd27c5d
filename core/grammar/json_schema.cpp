#include "grammar/json_schema.h"

#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/int_range.h"

namespace sy::grammar {

namespace {

using json = nlohmann::ordered_json;

// The JSON building blocks, llama.cpp's json.gbnf in spirit; numbers and whitespace bounded so a
// weak model cannot run on forever inside one.
const std::map<std::string, std::string>& primitives() {
  static const std::map<std::string, std::string> rules{
      {"space", R"(| " " | "\n" [ \t]{0,20})"},
      {"char", R"([^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt/] | "u" [0-9a-fA-F]{4}))"},
      {"string", R"("\"" char* "\"" space)"},
      {"integer", R"(("-"? ([0-9] | [1-9] [0-9]{0,15})) space)"},
      {"number",
       R"(("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? space)"},
      {"boolean", R"(("true" | "false") space)"},
      {"null", R"("null" space)"},
      {"value", R"(object | array | string | number | boolean | null)"},
      {"object",
       R"("{" space (string ":" space value ("," space string ":" space value)*)? "}" space)"},
      {"array", R"("[" space (value ("," space value)*)? "]" space)"},
      {"date", R"([0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [1-2] [0-9] | "3" [0-1]))"},
      {"time",
       R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))"},
      {"uuid",
       R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})"},
  };
  return rules;
}

// What a rule uses of the other primitives.
const std::map<std::string, std::vector<std::string>>& uses() {
  static const std::map<std::string, std::vector<std::string>> u{
      {"string", {"char", "space"}},
      {"integer", {"space"}},
      {"number", {"space"}},
      {"boolean", {"space"}},
      {"null", {"space"}},
      {"value", {"object", "array", "string", "number", "boolean", "null"}},
      {"object", {"space", "string", "value"}},
      {"array", {"space", "value"}},
  };
  return u;
}

// Keywords that only annotate.
const std::set<std::string> kAnnotations{"title",    "description", "default",  "examples",
                                         "$schema",  "$id",         "$comment", "deprecated",
                                         "readOnly", "writeOnly",   "$defs",    "definitions"};
const std::set<std::string> kSupported{"type",
                                       "properties",
                                       "required",
                                       "additionalProperties",
                                       "items",
                                       "prefixItems",
                                       "minItems",
                                       "maxItems",
                                       "minLength",
                                       "maxLength",
                                       "enum",
                                       "const",
                                       "anyOf",
                                       "oneOf",
                                       "allOf",
                                       "$ref",
                                       "format",
                                       "minimum",
                                       "maximum",
                                       "exclusiveMinimum",
                                       "exclusiveMaximum"};

// A GBNF literal for `text`.
std::string literal(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789ABCDEF";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class Converter {
 public:
  Converter(const json& root, std::string prefix) : root_(root), prefix_(std::move(prefix)) {}

  std::string run(const std::string& root_name) {
    const std::string top = visit(root_, "");
    std::string out = root_name + " ::= " + top + "\n";
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out;
  }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw Error("schema " + (path.empty() ? std::string("(root)") : path) + ": " + what);
  }

  std::string use(const std::string& primitive) {
    if (rules_.count(primitive)) return primitive;
    rules_[primitive] = primitives().at(primitive);
    const auto it = uses().find(primitive);
    if (it != uses().end())
      for (const auto& dep : it->second) use(dep);
    return primitive;
  }

  // A new rule named after the schema path.
  std::string rule(const std::string& hint, const std::string& body) {
    std::string base = prefix_;
    for (const char c : hint) base += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '-';
    while (!base.empty() && base.front() == '-') base.erase(base.begin());
    if (base.empty()) base = "schema";
    std::string name = base + "-s";
    for (int n = 2; rules_.count(name); ++n) name = base + "-s" + std::to_string(n);
    rules_[name] = body;
    return name;
  }

  std::string visit(const json& s, const std::string& path) {
    if (++depth_ > 64) fail(path, "nests deeper than 64 levels");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail(path, "the schema false allows nothing");
      return use("value");
    }
    if (!s.is_object()) fail(path, "a schema must be an object or a boolean");
    for (const auto& [k, v] : s.items())
      if (!kSupported.count(k) && !kAnnotations.count(k))
        fail(path, "'" + k + "' is not supported");
    if (s.contains("$ref")) return ref(s["$ref"], path);
    if (s.contains("const")) return literal(s["const"].dump()) + " " + use("space");
    if (s.contains("enum")) {
      const json& e = s["enum"];
      if (!e.is_array() || e.empty()) fail(path + "/enum", "must be a non-empty array");
      std::string alts;
      for (const auto& v : e) alts += (alts.empty() ? "" : " | ") + literal(v.dump());
      return "(" + alts + ") " + use("space");
    }
    for (const char* key : {"anyOf", "oneOf"})
      if (s.contains(key)) {
        const json& list = s[key];
        if (!list.is_array() || list.empty()) fail(path + "/" + key, "must be a non-empty array");
        std::string alts;
        for (size_t i = 0; i < list.size(); ++i)
          alts += (i ? " | " : "") + visit(list[i], path + "/" + key + "/" + std::to_string(i));
        return "(" + alts + ")";
      }
    if (s.contains("allOf")) {
      const json& list = s["allOf"];
      if (!list.is_array() || list.size() != 1)
        fail(path + "/allOf", "only a single schema is supported");
      return visit(list[0], path + "/allOf/0");
    }
    if (!s.contains("type")) {
      if (s.contains("properties")) return object(s, path);
      if (s.contains("items") || s.contains("prefixItems")) return array(s, path);
      return use("value");
    }
    const json& t = s["type"];
    if (t.is_array()) {
      if (t.empty()) fail(path + "/type", "must not be empty");
      std::string alts;
      for (const auto& one : t) alts += (alts.empty() ? "" : " | ") + typed(s, one, path);
      return "(" + alts + ")";
    }
    return typed(s, t, path);
  }

  std::string typed(const json& s, const json& t, const std::string& path) {
    if (!t.is_string()) fail(path + "/type", "must be a string or an array of strings");
    const std::string type = t.get<std::string>();
    if (type == "object") return object(s, path);
    if (type == "array") return array(s, path);
    if (type == "string") return string(s, path);
    if (type == "integer" && bounded(s)) return integer_range(s, path);
    if (type == "number" && bounded(s))
      fail(path, "'minimum' / 'maximum' are supported on integers only");
    if (type == "integer" || type == "number" || type == "boolean" || type == "null")
      return use(type);
    fail(path + "/type", "unknown type '" + type + "'");
  }

  static bool bounded(const json& s) {
    for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
      if (s.contains(k)) return true;
    return false;
  }

  // An integer's minimum / maximum, exclusive ones as numbers (draft 6 on) or as booleans that
  // make minimum / maximum exclusive (draft 4).
  std::string integer_range(const json& s, const std::string& path) {
    std::optional<int64_t> lo, hi;
    auto number = [&](const char* key) {
      const json& v = s[key];
      if (!v.is_number()) fail(path + "/" + key, "must be a number");
      const double x = v.get<double>();
      if (!(std::abs(x) < 1e15)) fail(path + "/" + key, "must lie within (-10^15, 10^15)");
      return x;
    };
    auto exclusive = [&](const char* key) {
      return s.contains(key) && s[key].is_boolean() && s[key].get<bool>();
    };
    auto raise = [&](int64_t v) { lo = lo ? std::max(*lo, v) : v; };
    auto lower = [&](int64_t v) { hi = hi ? std::min(*hi, v) : v; };
    if (s.contains("minimum")) {
      const double m = number("minimum");
      raise(exclusive("exclusiveMinimum") ? int64_t(std::floor(m)) + 1 : int64_t(std::ceil(m)));
    }
    if (s.contains("maximum")) {
      const double m = number("maximum");
      lower(exclusive("exclusiveMaximum") ? int64_t(std::ceil(m)) - 1 : int64_t(std::floor(m)));
    }
    if (s.contains("exclusiveMinimum") && !s["exclusiveMinimum"].is_boolean())
      raise(int64_t(std::floor(number("exclusiveMinimum"))) + 1);
    if (s.contains("exclusiveMaximum") && !s["exclusiveMaximum"].is_boolean())
      lower(int64_t(std::ceil(number("exclusiveMaximum"))) - 1);
    try {
      return "(" + int_range_gbnf(lo, hi) + ") " + use("space");
    } catch (const std::invalid_argument& e) {
      fail(path, e.what());
    }
  }

  static uint32_t count(const json& s, const char* key, const std::string& path) {
    if (!s.contains(key)) return 0;
    const json& v = s[key];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > 10000)
      fail(path + "/" + key, "must be an integer in [0, 10000]");
    return v.get<uint32_t>();
  }

  std::string string(const json& s, const std::string& path) {
    if (s.contains("format")) {
      const json& f = s["format"];
      if (!f.is_string()) fail(path + "/format", "must be a string");
      const std::string format = f.get<std::string>();
      if (format == "date" || format == "time" || format == "uuid")
        return "\"\\\"\" " + use(format) + " \"\\\"\" " + use("space");
      if (format == "date-time")
        return "\"\\\"\" " + use("date") + " \"T\" " + use("time") + " \"\\\"\" " + use("space");
      // Other formats (email, uri, ...) are not checked: any string.
    }
    if (!s.contains("minLength") && !s.contains("maxLength")) return use("string");
    const uint32_t min = count(s, "minLength", path);
    const std::string max =
        s.contains("maxLength") ? std::to_string(count(s, "maxLength", path)) : "";
    if (!max.empty() && std::stoul(max) < min) fail(path, "maxLength is below minLength");
    use("space");
    return "\"\\\"\" " + use("char") + "{" + std::to_string(min) + "," + max + "} \"\\\"\" space";
  }

  std::string array(const json& s, const std::string& path) {
    use("space");
    std::string body = "\"[\" space";
    size_t fixed = 0;
    if (s.contains("prefixItems")) {
      const json& p = s["prefixItems"];
      if (!p.is_array()) fail(path + "/prefixItems", "must be an array");
      for (size_t i = 0; i < p.size(); ++i)
        body += std::string(i ? " \",\" space " : " ") +
                visit(p[i], path + "/prefixItems/" + std::to_string(i));
      fixed = p.size();
    }
    const json items = s.contains("items") ? s["items"] : json(fixed ? false : true);
    if (!(items.is_boolean() && !items.get<bool>())) {
      const std::string item = visit(items, path + "/items");
      const uint32_t min = count(s, "minItems", path);
      const bool bounded = s.contains("maxItems");
      const uint32_t max = count(s, "maxItems", path);
      if (bounded && max < min) fail(path, "maxItems is below minItems");
      const uint32_t lo = min > fixed ? uint32_t(min - fixed) : 0;
      auto range = [](uint32_t a, const std::string& b) {
        return "{" + std::to_string(a) + "," + b + "}";
      };
      if (fixed) {
        const std::string hi = bounded ? std::to_string(max > fixed ? max - fixed : 0) : "";
        body += " (\",\" space " + item + ")" + range(lo, hi);
      } else if (!bounded || max > 0) {
        const std::string rest = bounded ? std::to_string(max - 1) : "";
        const std::string list =
            item + " (\",\" space " + item + ")" + range(lo > 0 ? lo - 1 : 0, rest);
        body += lo > 0 ? " " + list : " (" + list + ")?";
      }
    }
    return rule(path + "-array", body + " \"]\" space");
  }

  std::string object(const json& s, const std::string& path) {
    use("space");
    struct Prop {
      std::string kv;
      bool required;
    };
    std::vector<Prop> props;
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) fail(path + "/required", "must be an array of names");
      for (const auto& r : s["required"]) {
        if (!r.is_string()) fail(path + "/required", "must be an array of names");
        required.insert(r.get<std::string>());
      }
    }
    if (s.contains("properties")) {
      const json& p = s["properties"];
      if (!p.is_object()) fail(path + "/properties", "must be an object");
      for (const auto& [key, sub] : p.items()) {
        const std::string value = visit(sub, path + "/properties/" + key);
        props.push_back(
            {literal(json(key).dump()) + " space \":\" space " + value, required.count(key) > 0});
      }
    }
    for (const auto& r : required)
      if (!s.contains("properties") || !s["properties"].contains(r))
        fail(path + "/required", "'" + r + "' is not among the properties");
    std::string extra;  // "" when no other key is allowed
    if (s.contains("additionalProperties")) {
      const json& a = s["additionalProperties"];
      if (!(a.is_boolean() && !a.get<bool>()))
        extra = use("string") + " \":\" space " + visit(a, path + "/additionalProperties");
    } else if (!s.contains("properties")) {
      extra = use("string") + " \":\" space " + use("value");  // {"type": "object"}: any object
    }
    // tail(i, first): the properties from i on, `first` when none has been written yet (no comma).
    std::map<std::pair<size_t, bool>, std::string> tails;
    std::function<std::string(size_t, bool)> tail = [&](size_t i, bool first) -> std::string {
      const auto key = std::make_pair(i, first);
      if (const auto it = tails.find(key); it != tails.end()) return it->second;
      std::string body;
      if (i == props.size()) {
        if (extra.empty()) return tails[key] = "";
        body = first ? "(" + extra + " (\",\" space " + extra + ")*)?"
                     : "(\",\" space " + extra + ")*";
      } else {
        const std::string kv = (first ? "" : "\",\" space ") + props[i].kv;
        const std::string next = tail(i + 1, false);
        body = kv + (next.empty() ? "" : " " + next);
        if (!props[i].required) {
          const std::string skip = tail(i + 1, first);
          body = "(" + body + (skip.empty() ? ")?" : " | " + skip + ")");
        }
      }
      return tails[key] = rule(path + "-obj" + std::to_string(i) + (first ? "f" : "n"), body);
    };
    const std::string inner = tail(0, true);
    return rule(path + "-object",
                "\"{\" space " + (inner.empty() ? "" : inner + " ") + "\"}\" space");
  }

  std::string ref(const json& r, const std::string& path) {
    if (!r.is_string()) fail(path + "/$ref", "must be a string");
    const std::string target = r.get<std::string>();
    if (const auto it = refs_.find(target); it != refs_.end()) return it->second;
    const json* def = nullptr;
    std::string name;
    if (target == "#") {
      def = &root_;
      name = "root-ref";
    } else {
      for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
        const std::string p = prefix;
        if (target.rfind(p, 0) != 0) continue;
        const std::string key = target.substr(p.size());
        const std::string section = p.substr(2, p.size() - 3);
        if (root_.contains(section) && root_[section].contains(key)) {
          def = &root_[section][key];
          name = key;
        }
      }
    }
    if (!def) fail(path + "/$ref", "'" + target + "' does not name a definition in this schema");
    // Named before it is visited, so a recursive schema refers to itself.
    const std::string rule_name = rule(name + "-ref", "");
    refs_[target] = rule_name;
    rules_[rule_name] = visit(*def, target.substr(1));
    return rule_name;
  }

  const json& root_;
  std::string prefix_;
  std::map<std::string, std::string> rules_;
  std::map<std::string, std::string> refs_;
  int depth_ = 0;
};

}  // namespace

std::string json_schema_gbnf(const nlohmann::ordered_json& schema, const std::string& root,
                             const std::string& prefix) {
  return Converter(schema, prefix).run(root);
}

std::string json_object_gbnf() {
  return json_schema_gbnf(json{{"type", "object"}});
}

}  // namespace sy::grammar
