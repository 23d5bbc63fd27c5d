// Jinja2's filters and tests, Python's str/dict/list methods, and the globals (range, namespace,
// dict, raise_exception) a template can call, with transformers' tojson.
#pragma once

#include <optional>
#include <string_view>

#include "jinja/call.h"

namespace sy::jinja {

bool is_filter(std::string_view name);
bool is_test(std::string_view name);
// Throw Error on an unknown name or bad arguments.
Value apply_filter(std::string_view name, const Value& v, Call& c);
bool apply_test(std::string_view name, const Value& v, Call& c);
// obj.name(...) for str, dict and list methods; nullopt when the type has no such method.
std::optional<Value> call_method(const Value& obj, std::string_view name, Call& c);
// The built-in global of that name, or undefined.
Value builtin_global(std::string_view name);

// json.dumps(v, ensure_ascii=False, indent=..., separators=..., sort_keys=...): indent < 0 is
// None; empty separators are Python's defaults.
struct JsonStyle {
  int indent = -1;
  std::string indent_text;  // indent given as a string
  std::string item_sep, key_sep;
  bool sort_keys = false;
  bool ensure_ascii = false;
  size_t limit = kMaxText;  // bytes; past it, Error
};
Text to_json(const Value& v, const JsonStyle& style);

}  // namespace sy::jinja
