#include "server/json_body.h"

#include "server/api_error.h"

namespace sy::server {
namespace {

using nlohmann::json;

// Counts values and depth; stops the parse at the first limit passed.
class LimitScan : public nlohmann::json_sax<json> {
 public:
  explicit LimitScan(const JsonLimits& l) : lim_(l) {}
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = e.what();
    return false;
  }

  // Why the scan stopped: a parse error (code invalid_json) or a limit.
  [[noreturn]] void raise() const {
    if (!error_.empty())
      throw ApiError(400, "We could not parse the JSON body of your request: " + error_,
                     "invalid_request_error", "", "invalid_json");
    if (too_deep_)
      throw ApiError(
          400, "The JSON body nests deeper than " + std::to_string(lim_.max_depth) + " levels.",
          "invalid_request_error", "", "json_too_deep");
    throw ApiError(
        400, "The JSON body holds more than " + std::to_string(lim_.max_elements) + " values.",
        "invalid_request_error", "", "json_too_large");
  }

 private:
  bool value() { return ++elements_ <= lim_.max_elements; }
  bool open() {
    if (!value()) return false;
    if (++depth_ > lim_.max_depth) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  JsonLimits lim_;
  uint64_t elements_ = 0;
  uint32_t depth_ = 0;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace

json parse_json_body(const std::string& body, const JsonLimits& limits) {
  LimitScan scan(limits);
  if (!json::sax_parse(body, &scan)) scan.raise();
  return json::parse(body);  // valid and within the limits: builds a bounded document
}

}  // namespace sy::server
