#include "server/output_grammar.h"

#include <set>

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "server/api_error.h"

namespace sy::server {

namespace {

// In the client's key order throughout: a schema's properties and a call's keys ("name" before
// "arguments") come out in the order given.
using json = nlohmann::ordered_json;

[[noreturn]] void unknown(const std::string& param) {
  throw ApiError(400, "Unrecognized request argument supplied: " + param, "invalid_request_error",
                 param, "unknown_parameter");
}

std::string schema_gbnf(const json& schema, const std::string& param) {
  try {
    return grammar::json_schema_gbnf(schema);
  } catch (const grammar::Error& e) {
    invalid_value(param, e.what());
  }
}

// A tool's parameters schema (an object by default).
json parameters(const json& tool) {
  const auto& f = tool["function"];
  return f.contains("parameters") && !f["parameters"].is_null() ? f["parameters"]
                                                                : json{{"type", "object"}};
}

// A GBNF string literal of `s`.
std::string literal(const std::string& s) {
  return json(s).dump();
}

// Text up to `close`: any character but its first, or its first not followed by its second.
std::string thought_rule(std::string_view close) {
  return std::string("thought ::= ([^") + close[0] + "] | \"" + close[0] + "\" [^" + close[1] +
         "])*\n";
}

// Reasoning first where the template thinks, or gpt-oss's analysis message, then `calls`.
std::string root_rule(const OutputSyntax& syntax) {
  if (syntax.channels)  // gpt-oss: an analysis message may come before the call
    return "root ::= (\"<|channel|>analysis<|message|>\" thought \"<|end|><|start|>assistant\")? "
           "calls\n" +
           thought_rule("<|end|>");
  if (!syntax.think) return "root ::= calls\n";
  const std::string open = literal(std::string(syntax.think_open)),
                    close = literal(std::string(syntax.think_close));
  const std::string thought = thought_rule(syntax.think_close);
  if (syntax.opens_in_think) return "root ::= thought " + close + " [ \\n]{0,4} calls\n" + thought;
  return "root ::= (" + open + " thought " + close + " [ \\n]{0,4})? calls\n" + thought;
}

// Calls whose name is markup and whose arguments follow it (DeepSeek, gpt-oss, Mistral's
// [ARGS]): one alternative per tool, the tool's name then its own parameters' grammar.
std::shared_ptr<const grammar::Grammar> marked_call_grammar(const OutputSyntax& syntax,
                                                            const nlohmann::ordered_json& tools,
                                                            const std::string& name,
                                                            bool parallel) {
  std::string alternatives;
  std::set<std::string> rules;  // the schemas' shared helpers (space, string, ...) once
  size_t i = 0;
  for (const auto& t : tools) {
    const std::string n = t["function"]["name"].get<std::string>();
    if (!name.empty() && n != name) continue;
    const std::string args = "args" + std::to_string(i), prefix = "t" + std::to_string(i++) + "-";
    std::string gbnf;
    try {
      gbnf = grammar::json_schema_gbnf(parameters(t), args, prefix);
    } catch (const grammar::Error& e) {
      invalid_value("tools", e.what());
    }
    for (size_t at = 0; at < gbnf.size();) {
      const size_t nl = gbnf.find('\n', at);
      rules.insert(gbnf.substr(at, nl - at));
      at = nl == std::string::npos ? gbnf.size() : nl + 1;
    }
    std::string head;
    if (syntax.calls == CallSyntax::harmony)
      head = "<|channel|>commentary to=functions." + n + " <|constrain|>json<|message|>";
    else if (syntax.calls == CallSyntax::mistral)
      head = "[TOOL_CALLS]" + n + "[ARGS]";
    else if (syntax.fenced)
      head = "function<\uFF5Ctool\u2581sep\uFF5C>" + n + "\n```json\n";
    else
      head = n + "<\uFF5Ctool\u2581sep\uFF5C>";
    alternatives += (alternatives.empty() ? "" : " | ") + literal(head) + " " + args +
                    (syntax.fenced ? " \"\\n```\"" : "");
  }
  if (alternatives.empty())
    invalid_value("tool_choice", "no tool in 'tools' is named '" + name + "'.");
  std::string gbnf;
  for (const std::string& r : rules) gbnf += r + "\n";
  gbnf += "call ::= " + alternatives + "\n";
  if (syntax.calls == CallSyntax::harmony) {  // one call: <|call|> ends the turn
    gbnf += "calls ::= call\n";
  } else if (syntax.calls == CallSyntax::mistral) {  // each call after its own [TOOL_CALLS]
    gbnf += parallel ? "calls ::= call+\n" : "calls ::= call\n";
  } else {
    gbnf +=
        "tagged ::= \"<\uFF5Ctool\u2581call\u2581begin\uFF5C>\" call "
        "\"<\uFF5Ctool\u2581call\u2581end\uFF5C>\"\n";
    gbnf += std::string("calls ::= \"<\uFF5Ctool\u2581calls\u2581begin\uFF5C>\" tagged ") +
            (parallel ? "(\"\\n\"? tagged)* " : "") +
            "\"<\uFF5Ctool\u2581calls\u2581end\uFF5C>\"\n";
  }
  return compile_gbnf(gbnf + root_rule(syntax), "tools");
}

}  // namespace

std::shared_ptr<const grammar::Grammar> compile_gbnf(const std::string& gbnf,
                                                     const std::string& param) {
  try {
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  } catch (const grammar::Error& e) {
    invalid_value(param, e.what());
  }
}

std::string response_format_gbnf(const json& v) {
  if (!v.is_object()) invalid_value("response_format", "expected an object.");
  if (!v.contains("type") || !v["type"].is_string())
    invalid_value("response_format.type", "required property is missing.");
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
      invalid_value("response_format.json_schema", "required property is missing.");
    const json& js = v["json_schema"];
    for (const auto& [k, x] : js.items()) {
      const std::string at = "response_format.json_schema." + k;
      if (k == "name" || k == "description") {
        if (!x.is_string()) invalid_value(at, "expected a string.");
      } else if (k == "strict") {
        if (!x.is_boolean() && !x.is_null()) invalid_value(at, "expected a boolean.");
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
  if (syntax.calls == CallSyntax::dsml)
    throw ApiError(400,
                   "'tool_choice' 'required' or a named function is not supported for this "
                   "model's calls (DeepSeek V3.2's DSML) yet; use 'auto'.",
                   "invalid_request_error", "tool_choice", "unsupported_value");
  if (syntax.calls == CallSyntax::deepseek || syntax.calls == CallSyntax::harmony ||
      syntax.args_tag)
    return marked_call_grammar(syntax, tools, name, parallel);
  // {"name": <const>, "arguments"|"parameters": <its parameters>} for each tool offered.
  const char* args = syntax.calls == CallSyntax::llama3 ? "parameters" : "arguments";
  json calls = json::array();
  for (const auto& t : tools) {
    const auto& f = t["function"];
    const std::string n = f["name"].get<std::string>();
    if (!name.empty() && n != name) continue;
    calls.push_back({{"type", "object"},
                     {"properties", {{"name", {{"const", n}}}, {args, parameters(t)}}},
                     {"required", {"name", args}}});
  }
  if (calls.empty()) invalid_value("tool_choice", "no tool in 'tools' is named '" + name + "'.");
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
  return compile_gbnf(gbnf + root_rule(syntax), "tools");
}

}  // namespace sy::server
