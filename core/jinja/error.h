// A template that cannot be parsed or rendered: the message names the template line.
#pragma once

#include <stdexcept>
#include <string>

namespace sy::jinja {

class Error : public std::runtime_error {
 public:
  // line 0: no line (a limit, a caller's mistake).
  Error(int line, const std::string& message)
      : std::runtime_error(line > 0 ? "template line " + std::to_string(line) + ": " + message
                                    : message),
        line_(line) {}
  int line() const { return line_; }

 private:
  int line_;
};

}  // namespace sy::jinja
