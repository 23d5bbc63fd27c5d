// A Jinja template as Hugging Face's apply_chat_template runs it: Jinja2 with trim_blocks and
// lstrip_blocks, the loopcontrols extension, transformers' tojson and raise_exception, and the
// immutable sandbox. Parsed once, rendered many times, each render bounded in time, output and
// depth (Limits).
#pragma once

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "jinja/ast.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"

namespace sy::jinja {

class Template {
 public:
  // Throws Error naming the line: syntax, an unknown tag, filter or test.
  explicit Template(std::string_view source);

  // variables: the render's globals. Throws Error naming the line where the render failed
  // (raise_exception's message, an undefined value used, a limit).
  Text render(const Object& variables, const Limits& limits = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

// transformers' strftime_now(format): `now` formatted as C's strftime does.
Value strftime_now(const std::tm& now);

// A JSON value as the template sees it (objects keep their key order). from_data: its strings
// and keys came from the caller's data (Text::data).
Value from_json(const nlohmann::ordered_json& j, bool from_data);

}  // namespace sy::jinja
