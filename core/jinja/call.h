// The arguments of a call to a filter, test, method, global or macro, by position and by
// keyword, as Python binds them.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace sy::jinja {

class Interpreter;

struct Call {
  std::string_view name;  // for messages
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  Interpreter* in = nullptr;
  int line = 0;

  // The i-th parameter, named `key`: positional i, else the keyword, else undefined.
  const Value& arg(size_t i, std::string_view key) const;
  bool has(size_t i, std::string_view key) const { return !arg(i, key).is_undefined(); }
  // Throws Error when more than n positional arguments were given.
  void at_most(size_t n) const;
};

}  // namespace sy::jinja
