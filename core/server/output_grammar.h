// The grammar a request's output must follow (grammar/): llama-server's `grammar` field (GBNF),
// response_format json_object / json_schema, or tool_choice "required" / a named function,
// written in the call syntax of the model's template. Every refusal is an ApiError(400) naming
// the field.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/grammar.h"
#include "server/chat_output.h"

namespace sy::server {

// GBNF text -> a checked grammar; `param` names the field in the error.
std::shared_ptr<const grammar::Grammar> compile_gbnf(const std::string& gbnf,
                                                     const std::string& param);

// response_format as OpenAI (and llama-server: json_object with a "schema") take it: "" for
// {"type": "text"}, else the GBNF its output must match.
std::string response_format_gbnf(const nlohmann::ordered_json& response_format);

// A tool call (one, or several when parallel) to one of `tools` (name: only that one) in the
// syntax the template's answers use; the output may open with reasoning where the syntax thinks.
std::shared_ptr<const grammar::Grammar> tool_call_grammar(const OutputSyntax& syntax,
                                                          const nlohmann::ordered_json& tools,
                                                          const std::string& name, bool parallel);

}  // namespace sy::server
