// JSON Schema -> GBNF, for response_format json_schema (OpenAI's structured outputs), and the
// grammar of any JSON object for response_format json_object. Properties come in the schema's
// order; an object takes no properties beyond its own unless additionalProperties says so (what
// OpenAI's strict mode requires anyway). Keywords that would constrain the output in ways the
// grammar does not express (pattern, minimum, multipleOf, ...) are refused by name rather than
// ignored.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sy::grammar {

// Throws Error naming the schema path ("/properties/age: 'minimum' is not supported"). The
// top rule is named `root`; its helpers are named after the schema paths, with `prefix` before
// them (several schemas in one grammar).
std::string json_schema_gbnf(const nlohmann::ordered_json& schema, const std::string& root = "root",
                             const std::string& prefix = "");
std::string json_object_gbnf();

}  // namespace sy::grammar
