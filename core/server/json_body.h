// Request bodies parsed within limits: a first pass over the text (nlohmann's SAX interface,
// which builds nothing) checks that it is JSON, nests no deeper than max_depth and holds no more
// than max_elements values; only then is the document built, so its size is bounded by the
// limits, not by what a client chose to nest. Refusals are ApiError(400) in OpenAI's shape.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace sy::server {

struct JsonLimits {
  uint32_t max_depth = 64;
  uint32_t max_elements = 1 << 18;
};

// Throws ApiError(400, code invalid_json, json_too_deep or json_too_large).
nlohmann::json parse_json_body(const std::string& body, const JsonLimits& limits);

}  // namespace sy::server
