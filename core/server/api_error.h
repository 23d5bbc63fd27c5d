// Errors the HTTP API returns, in OpenAI's shape:
// {"error": {"message": ..., "type": ..., "param": ... | null, "code": ... | null}}.
#pragma once

#include <stdexcept>
#include <string>

namespace sy::server {

struct ApiError : std::runtime_error {
  int status;
  std::string type, param, code;  // empty param / code: null
  ApiError(int status_, std::string message, std::string type_ = "invalid_request_error",
           std::string param_ = "", std::string code_ = "")
      : std::runtime_error(std::move(message)),
        status(status_),
        type(std::move(type_)),
        param(std::move(param_)),
        code(std::move(code_)) {}
};

// A 400 for a field whose value is wrong: "Invalid 'PARAM': WHY" (OpenAI's invalid_value).
[[noreturn]] inline void invalid_value(const std::string& param, const std::string& why) {
  throw ApiError(400, "Invalid '" + param + "': " + why, "invalid_request_error", param,
                 "invalid_value");
}

// The JSON body for `e` (one line, no trailing newline).
std::string error_body(const ApiError& e);

}  // namespace sy::server
