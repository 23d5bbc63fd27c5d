// Structured outputs end to end on the tiny random-weight model, whose free output is noise: a
// JSON schema's answer parses and has the schema's keys and types, json_object gives an object,
// a GBNF `grammar` gives one of its sentences, streamed text equals the whole answer, tool_choice
// "required" / a named function yields tool_calls in the template's syntax, and malformed
// grammars, schemas and choices are 400s naming the problem.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <set>

#include "gguf/gguf.h"
#include "gguf_copy.h"
#include "server_fixture.h"

namespace {

using namespace sy::test;

std::string config(const fs::path& model = {}) {
  return plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" +
         variant_tables("", "dynamic", "", model);
}

json chat(const std::string& text, uint32_t max_tokens) {
  return {{"messages", {{{"role", "user"}, {"content", text}}}},
          {"max_tokens", max_tokens},
          {"temperature", 0}};
}

json ok(const httplib::Result& r) {
  EXPECT_EQ(r->status, 200) << r->body;
  return json::parse(r->body);
}

const json kPerson = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"enum": ["Ann", "Bo"]},
    "age": {"type": "integer"},
    "member": {"type": "boolean"},
    "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 2}
  },
  "required": ["name", "age", "member", "tags"],
  "additionalProperties": false
})");

void expect_person(const json& p) {
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p.size(), 4u);
  EXPECT_TRUE(p["name"] == "Ann" || p["name"] == "Bo") << p;
  EXPECT_TRUE(p["age"].is_number_integer()) << p;
  EXPECT_TRUE(p["member"].is_boolean()) << p;
  ASSERT_TRUE(p["tags"].is_array()) << p;
  EXPECT_LE(p["tags"].size(), 2u);
}

TEST(StructuredOutput, JsonSchemaAnswersParseAndFollowTheSchema) {
  TestServer s("structured-schema", config());
  json req = chat("Who?", 200);
  req["response_format"] = {
      {"type", "json_schema"},
      {"json_schema", {{"name", "person"}, {"strict", true}, {"schema", kPerson}}}};
  for (int seed = 0; seed < 4; ++seed) {
    req["temperature"] = seed == 0 ? 0.0 : 1.0;
    req["seed"] = seed;
    const json r = ok(s.post("/v1/chat/completions", req));
    const json& choice = r["choices"][0];
    SCOPED_TRACE(choice.dump());
    EXPECT_EQ(choice["finish_reason"], "stop");
    expect_person(json::parse(choice["message"]["content"].get<std::string>()));
  }
  // Streamed: the deltas add up to the same answer.
  req["temperature"] = 0;
  const std::string whole =
      ok(s.post("/v1/chat/completions", req))["choices"][0]["message"]["content"];
  req["stream"] = true;
  const auto r = s.post("/v1/chat/completions", req);
  ASSERT_EQ(r->status, 200);
  std::string streamed;
  for (const auto& e : events(r->body)) {
    if (e == "[DONE]") break;
    const json d = json::parse(e)["choices"][0]["delta"];
    if (d.contains("content") && d["content"].is_string()) streamed += d["content"];
  }
  EXPECT_EQ(streamed, whole);
}

TEST(StructuredOutput, JsonObjectAndGbnfOnBothEndpoints) {
  TestServer s("structured-gbnf", config());
  json req = chat("Anything", 300);
  req["response_format"] = {{"type", "json_object"}};
  const json r = ok(s.post("/v1/chat/completions", req));
  const std::string content = r["choices"][0]["message"]["content"];
  ASSERT_FALSE(content.empty());
  EXPECT_EQ(content[0], '{');
  if (r["choices"][0]["finish_reason"] == "stop") EXPECT_TRUE(json::parse(content).is_object());

  // llama-server's `grammar` on /v1/completions, and response_format there too (vLLM takes it).
  json comp = {{"prompt", "Say"}, {"max_tokens", 20}, {"temperature", 1.0}};
  comp["grammar"] = "root ::= (\"yes\" | \"no\") \".\" [0-9]{2}";
  std::set<std::string> seen;
  for (int seed = 0; seed < 6; ++seed) {
    comp["seed"] = seed;
    const json c = ok(s.post("/v1/completions", comp))["choices"][0];
    const std::string text = c["text"];
    EXPECT_EQ(c["finish_reason"], "stop");
    ASSERT_EQ(text.size(), text[0] == 'y' ? 6u : 5u) << text;
    EXPECT_TRUE(text.rfind("yes.", 0) == 0 || text.rfind("no.", 0) == 0) << text;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(text.back()))) << text;
    seen.insert(text.substr(0, 2));
  }
  comp.erase("grammar");
  comp["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"schema", kPerson}}}};
  comp["max_tokens"] = 200;
  comp["temperature"] = 0;
  expect_person(
      json::parse(ok(s.post("/v1/completions", comp))["choices"][0]["text"].get<std::string>()));
}

// A Hermes-style template (Qwen's <tool_call> tags), as a file's tokenizer.chat_template.
fs::path hermes_model() {
  const fs::path out = server_dir() / "tiny-hermes.gguf";
  const fs::path tmp = out.string() + "." + std::to_string(::getpid());  // cases run in parallel
  const auto f = sy::gguf::File::open(model_file("f32"));
  sy::gguf::Writer w = copy_gguf(*f);
  w.set("tokenizer.chat_template",
        sy::gguf::Value::of_str(
            "{% if tools %}Call a tool as <tool_call>{\"name\", \"arguments\"}</tool_call>\n"
            "{% endif %}{% for m in messages %}<|im_start|>"
            "{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"));
  w.write(tmp);
  fs::rename(tmp, out);
  return out;
}

const json kTools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"enum": ["Paris", "Oslo"]}, "days": {"type": "integer"}},
    "required": ["city", "days"]}}},
  {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
    "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"]}}}
])");

TEST(StructuredOutput, ToolChoiceRequiredAndNamedGiveToolCalls) {
  TestServer s("structured-tools", config(hermes_model()));
  json req = chat("Weather?", 200);
  req["tools"] = kTools;
  req["parallel_tool_calls"] = false;
  for (const json& choice :
       {json("required"), json{{"type", "function"}, {"function", {{"name", "get_time"}}}}}) {
    req["tool_choice"] = choice;
    const json r = ok(s.post("/v1/chat/completions", req))["choices"][0];
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["finish_reason"], "tool_calls");
    ASSERT_EQ(r["message"]["tool_calls"].size(), 1u);
    const json& call = r["message"]["tool_calls"][0];
    const std::string name = call["function"]["name"];
    const json args = json::parse(call["function"]["arguments"].get<std::string>());
    if (choice.is_object()) EXPECT_EQ(name, "get_time");
    if (name == "get_time") {
      EXPECT_TRUE(args["zone"] == "UTC" || args["zone"] == "CET");
    } else {
      ASSERT_EQ(name, "get_weather");
      EXPECT_TRUE(args["city"] == "Paris" || args["city"] == "Oslo");
      EXPECT_TRUE(args["days"].is_number_integer());
    }
  }
  // Streamed, the call arrives as a tool_calls delta.
  req["tool_choice"] = "required";
  req["stream"] = true;
  const auto r = s.post("/v1/chat/completions", req);
  ASSERT_EQ(r->status, 200);
  std::string name, finish;
  for (const auto& e : events(r->body)) {
    if (e == "[DONE]") break;
    const json c = json::parse(e)["choices"][0];
    if (c["delta"].contains("tool_calls"))
      name += c["delta"]["tool_calls"][0]["function"].value("name", "");
    if (c["finish_reason"].is_string()) finish = c["finish_reason"];
  }
  EXPECT_TRUE(name == "get_weather" || name == "get_time") << r->body;
  EXPECT_EQ(finish, "tool_calls");
}

TEST(StructuredOutput, MalformedGrammarsSchemasAndChoicesAre400s) {
  TestServer s("structured-errors", config());
  struct Case {
    std::string path;
    json extra;
    std::string param, code, message;
  };
  const std::vector<Case> cases = {
      {"/v1/completions",
       {{"grammar", "root ::= \"a\" | foo"}},
       "grammar",
       "invalid_value",
       "Invalid 'grammar': grammar line 1 column 16: undefined rule 'foo'"},
      {"/v1/completions",
       {{"grammar", "root ::= root \"x\""}},
       "grammar",
       "invalid_value",
       "Invalid 'grammar': rule 'root' is left-recursive: it can reach itself without consuming "
       "a character"},
      {"/v1/chat/completions",
       {{"response_format",
         {{"type", "json_schema"},
          {"json_schema", {{"name", "x"}, {"schema", {{"type", "number"}, {"minimum", 3}}}}}}}},
       "response_format.json_schema.schema",
       "invalid_value",
       "Invalid 'response_format.json_schema.schema': schema (root): 'minimum' / 'maximum' are "
       "supported on integers only"},
      {"/v1/chat/completions",
       {{"response_format", {{"type", "json_schema"}}}},
       "response_format.json_schema",
       "invalid_value",
       "Invalid 'response_format.json_schema': required property is missing."},
      {"/v1/chat/completions",
       {{"response_format", {{"type", "xml"}}}},
       "response_format.type",
       "invalid_value",
       "Invalid 'response_format.type': expected one of 'text', 'json_object', 'json_schema', got "
       "'xml'."},
      {"/v1/chat/completions",
       {{"response_format", {{"type", "json_object"}}}, {"grammar", "root ::= \"a\""}},
       "grammar",
       "invalid_value",
       "Invalid 'grammar': give either 'grammar' or a JSON 'response_format', not both."},
      {"/v1/chat/completions",
       {{"tool_choice", "required"}},
       "tool_choice",
       "invalid_value",
       "Invalid 'tool_choice': 'required' or a named function needs 'tools'."},
      {"/v1/chat/completions",
       {{"tool_choice", "any"}},
       "tool_choice",
       "invalid_value",
       "Invalid 'tool_choice': expected 'none', 'auto', 'required' or a function, got 'any'."},
      {"/v1/chat/completions",
       {{"tools", kTools}, {"tool_choice", "required"}},
       "tool_choice",
       "unsupported_value",
       "'tool_choice' 'required' or a named function needs a model whose chat template writes "
       "tool calls; this one's does not."},
  };
  for (const auto& c : cases) {
    json req =
        c.path == "/v1/completions" ? json{{"prompt", "x"}, {"max_tokens", 2}} : chat("x", 2);
    req.update(c.extra);
    const auto r = s.post(c.path, req);
    ASSERT_EQ(r->status, 400) << c.message;
    const json e = json::parse(r->body)["error"];
    EXPECT_EQ(e["message"], c.message);
    EXPECT_EQ(e["param"], c.param);
    EXPECT_EQ(e["code"], c.code);
  }
  // A named function that is not offered, on a model that can call tools.
  TestServer t("structured-errors-tools", config(hermes_model()));
  json req = chat("x", 2);
  req["tools"] = kTools;
  req["tool_choice"] = {{"type", "function"}, {"function", {{"name", "nope"}}}};
  const auto r = t.post("/v1/chat/completions", req);
  ASSERT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["message"],
            "Invalid 'tool_choice': no tool in 'tools' is named 'nope'.");
  EXPECT_EQ(s.client->Get("/health")->status, 200);  // the servers are still up
  EXPECT_EQ(t.client->Get("/health")->status, 200);
}

}  // namespace
