#include "server/output_grammar.h"

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "server/api_error.h"

namespace sy::server {

namespace {

using nlohmann::json;

[[noreturn]] void invalid(const std::string& param, const std::string& why) {
  throw ApiError(400, "Invalid '" + param + "': " + why, "invalid_request_error", param,
                 "invalid_value");
}

[[noreturn]] void unknown(const std::string& param) {
  throw ApiError(400, "Unrecognized request argument supplied: " + param, "invalid_request_error",
                 param, "unknown_parameter");
}

std::string schema_gbnf(const json& schema, const std::string& param) {
  try {
    return grammar::json_schema_gbnf(schema);
  } catch (const grammar::Error& e) {
    invalid(param, e.what());
  }
}

}  // namespace

std::shared_ptr<const grammar::Grammar> compile_gbnf(const std::string& gbnf,
                                                     const std::string& param) {
  try {
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  } catch (const grammar::Error& e) {
    invalid(param, e.what());
  }
}

std::string response_format_gbnf(const json& v) {
  if (!v.is_object()) invalid("response_format", "expected an object.");
  if (!v.contains("type") || !v["type"].is_string())
    invalid("response_format.type", "required property is missing.");
  const std::string type = v["type"].get<std::string>();
  if (type == "text") {
    for (const auto& [k, _] : v.items())
      if (k != "type") unknown("response_format." + k);
    return "";
  }
  if (type == "json_object") {
    for (const auto& [k, _] : v.items())
      if (k != "type" && k != "schema") unknown("response_format." + k);
    if (v.contains("schema") && !v["schema"].is_null())  // llama-server's extension
      return schema_gbnf(v["schema"], "response_format.schema");
    return grammar::json_object_gbnf();
  }
  if (type == "json_schema") {
    for (const auto& [k, _] : v.items())
      if (k != "type" && k != "json_schema") unknown("response_format." + k);
    if (!v.contains("json_schema") || !v["json_schema"].is_object())
      invalid("response_format.json_schema", "required property is missing.");
    const json& js = v["json_schema"];
    for (const auto& [k, x] : js.items()) {
      const std::string at = "response_format.json_schema." + k;
      if (k == "name" || k == "description") {
        if (!x.is_string()) invalid(at, "expected a string.");
      } else if (k == "strict") {
        if (!x.is_boolean() && !x.is_null()) invalid(at, "expected a boolean.");
      } else if (k != "schema") {
        unknown(at);
      }
    }
    // No schema: any JSON value, as OpenAI reads it.
    return schema_gbnf(js.contains("schema") ? js["schema"] : json(true),
                       "response_format.json_schema.schema");
  }
  throw ApiError(400,
                 "Invalid 'response_format.type': expected one of 'text', 'json_object', "
                 "'json_schema', got '" +
                     type.substr(0, 64) + "'.",
                 "invalid_request_error", "response_format.type", "invalid_value");
}

std::shared_ptr<const grammar::Grammar> tool_call_grammar(const OutputSyntax& syntax,
                                                          const nlohmann::ordered_json& tools,
                                                          const std::string& name, bool parallel) {
  if (syntax.calls == CallSyntax::none)
    throw ApiError(400,
                   "'tool_choice' 'required' or a named function needs a model whose chat "
                   "template writes tool calls; this one's does not.",
                   "invalid_request_error", "tool_choice", "unsupported_value");
  // {"name": <const>, "arguments"|"parameters": <its parameters>} for each tool offered.
  const char* args = syntax.calls == CallSyntax::llama3 ? "parameters" : "arguments";
  json calls = json::array();
  for (const auto& t : tools) {
    const auto& f = t["function"];
    const std::string n = f["name"].get<std::string>();
    if (!name.empty() && n != name) continue;
    json params = f.contains("parameters") && !f["parameters"].is_null()
                      ? json::parse(f["parameters"].dump())
                      : json{{"type", "object"}};
    calls.push_back({{"type", "object"},
                     {"properties", {{"name", {{"const", n}}}, {args, params}}},
                     {"required", {"name", args}}});
  }
  if (calls.empty()) invalid("tool_choice", "no tool in 'tools' is named '" + name + "'.");
  std::string gbnf = schema_gbnf(json{{"anyOf", calls}}, "tools");
  gbnf.replace(0, 4, "call");  // "root ::= ..." names the one call
  const bool many = parallel && syntax.calls != CallSyntax::llama3;
  switch (syntax.calls) {
    case CallSyntax::hermes:
      gbnf += R"(tagged ::= "<tool_call>\n" call "\n</tool_call>")"
              "\n";
      gbnf += many ? "calls ::= tagged (\"\\n\" tagged)*\n" : "calls ::= tagged\n";
      break;
    case CallSyntax::mistral:
      gbnf += many ? "calls ::= \"[TOOL_CALLS][\" call (\",\" space call)* \"]\"\n"
                   : "calls ::= \"[TOOL_CALLS][\" call \"]\"\n";
      break;
    default:
      gbnf += "calls ::= call\n";
  }
  // Reasoning first where the template thinks ("</" ends it).
  const std::string thought = R"(thought ::= ([^<] | "<" [^/])*)"
                              "\n";
  if (syntax.opens_in_think)
    gbnf += "root ::= thought \"</think>\" [ \\n]{0,4} calls\n" + thought;
  else if (syntax.think)
    gbnf += "root ::= (\"<think>\" thought \"</think>\" [ \\n]{0,4})? calls\n" + thought;
  else
    gbnf += "root ::= calls\n";
  return compile_gbnf(gbnf, "tools");
}

}  // namespace sy::server
