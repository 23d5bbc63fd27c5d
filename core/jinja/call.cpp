#include "jinja/call.h"

#include "jinja/error.h"

namespace sy::jinja {

const Value& Call::arg(size_t i, std::string_view key) const {
  static const Value undefined;
  if (i < positional.size()) return positional[i];
  for (const auto& [k, v] : keyword)
    if (k == key) return v;
  return undefined;
}

void Call::at_most(size_t n) const {
  if (positional.size() > n)
    throw Error(line, std::string(name) + "() takes at most " + std::to_string(n) +
                          " positional argument" + (n == 1 ? "" : "s") + ", got " +
                          std::to_string(positional.size()));
}

}  // namespace sy::jinja
