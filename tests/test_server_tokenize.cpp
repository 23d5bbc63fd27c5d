// POST /tokenize and /detokenize end to end (llama.cpp's and vLLM's request shapes, exact ids,
// round trips, 400s with JSON bodies), chat prompts from the model's own Jinja template, POST
// /apply-template, and a template that neither parses nor names a family: chat refused with a
// 400 naming it, completions still served.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "config/config.h"
#include "gguf/gguf.h"
#include "gguf_copy.h"
#include "server_fixture.h"
#include "text/chat_template.h"

namespace {

using namespace sy::test;
using Ids = std::vector<int32_t>;

std::string single(const fs::path& model = {}, const std::string& model_keys = "") {
  std::string t = variant_tables("", "fixed_window", "max_batch = 4\nwait_window_ms = 1\n", model);
  if (!model_keys.empty()) t.insert(t.find("[backend]"), model_keys);
  return plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" + t;
}

// byte_level_vocab ids: a byte b is 3 + b; "Hi" spells "▁" (E2 96 81) first.
int32_t B(unsigned char c) {
  return 3 + c;
}
const Ids kHi = {B(0xE2), B(0x96), B(0x81), B('H'), B('i')};

const sy::text::Tokenizer& tokenizer_of(const TestServer& s) {
  return *s.server->router().current()->variants[0].runner->tokenizer();
}

json ok(const httplib::Result& r) {
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, 200) << r->body;
  return json::parse(r->body);
}

TEST(ServerTokenize, RoundTripsWithExactIds) {
  TestServer s("tok-basic", single());
  const uint32_t ctx = s.server->router().current()->variants[0].runner->limits().max_context;
  // llama.cpp's shape: no BOS unless add_special.
  json j = ok(s.post("/tokenize", {{"content", "Hi"}}));
  EXPECT_EQ(j["tokens"].get<Ids>(), kHi);
  EXPECT_EQ(j["count"], 5);
  EXPECT_EQ(j["max_model_len"], ctx);
  Ids with_bos = kHi;
  with_bos.insert(with_bos.begin(), 1);
  EXPECT_EQ(
      ok(s.post("/tokenize", {{"content", "Hi"}, {"add_special", true}}))["tokens"].get<Ids>(),
      with_bos);
  // vLLM's shape: a prompt gets BOS unless add_special_tokens is false.
  EXPECT_EQ(ok(s.post("/tokenize", {{"prompt", "Hi"}}))["tokens"].get<Ids>(), with_bos);
  EXPECT_EQ(ok(s.post("/tokenize", {{"prompt", "Hi"}, {"add_special_tokens", false}}))["tokens"]
                .get<Ids>(),
            kHi);
  // Pieces (llama.cpp: bytes when not UTF-8 alone) and token strings (vLLM).
  j = ok(
      s.post("/tokenize", {{"content", "Hi"}, {"with_pieces", true}, {"return_token_strs", true}}));
  EXPECT_EQ(j["tokens"], json::parse(R"([{"id":229,"piece":[226]},{"id":153,"piece":[150]},
      {"id":132,"piece":[129]},{"id":75,"piece":"H"},{"id":108,"piece":"i"}])"));
  EXPECT_EQ(j["token_strs"], json::parse(R"(["<0xE2>","<0x96>","<0x81>","<0x48>","<0x69>"])"));

  // Back to text: both servers' field names, control tokens shown.
  j = ok(s.post("/detokenize", {{"tokens", kHi}}));
  EXPECT_EQ(j["content"], "Hi");
  EXPECT_EQ(j["prompt"], "Hi");
  EXPECT_EQ(ok(s.post("/detokenize", {{"tokens", with_bos}}))["content"], "<s> Hi");
  const std::string text =
      "Stra\xC3\x9F"
      "e 12, caf\xC3\xA9!";
  const json ids = ok(s.post("/tokenize", {{"content", text}}))["tokens"];
  EXPECT_EQ(ids.get<Ids>(), tokenizer_of(s).encode(text, false));
  EXPECT_EQ(ok(s.post("/detokenize", {{"tokens", ids}}))["content"], text);
  EXPECT_EQ(ok(s.post("/detokenize", {{"tokens", json::array()}}))["content"], "");
}

TEST(ServerTokenize, MessagesUseTheChatTemplate) {
  TestServer s("tok-chat", single());  // a generated file has no template: chatml
  const json msgs = {{{"role", "user"}, {"content", "Hi"}}};
  const std::string chatml = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(ok(s.post("/tokenize", {{"messages", msgs}}))["tokens"].get<Ids>(),
            tokenizer_of(s).encode(chatml, false));
  EXPECT_EQ(
      ok(s.post("/tokenize", {{"messages", msgs}, {"add_generation_prompt", false}}))["tokens"]
          .get<Ids>(),
      tokenizer_of(s).encode("<|im_start|>user\nHi<|im_end|>\n", false));
  // A chat request is that prompt, with the vocabulary's BOS.
  const json c = ok(
      s.post("/v1/chat/completions", {{"messages", msgs}, {"max_tokens", 2}, {"temperature", 0}}));
  EXPECT_EQ(c["usage"]["prompt_tokens"], tokenizer_of(s).encode(chatml, true).size());
}

TEST(ServerTokenize, BadBodiesGet400s) {
  TestServer s("tok-bad", single());
  auto refused = [&](const std::string& path, const std::string& body) {
    const auto r = s.post_raw(path, body);
    EXPECT_TRUE(r);
    if (!r) return std::string();
    EXPECT_EQ(r->status, 400) << body;
    EXPECT_TRUE(json::parse(r->body).contains("error")) << r->body;
    return r->body;
  };
  EXPECT_EQ(json::parse(refused("/tokenize", "{not json"))["error"]["code"], "invalid_json");
  const std::string one_of =
      R"({"error":{"code":"invalid_value","message":"Give exactly one of 'content', 'prompt' or 'messages'.","param":null,"type":"invalid_request_error"}})";
  EXPECT_EQ(refused("/tokenize", "{}"), one_of);
  EXPECT_EQ(refused("/tokenize", R"({"content":"a","prompt":"b"})"), one_of);
  EXPECT_EQ(
      refused("/tokenize", R"({"content":"a","colour":1})"),
      R"({"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: colour","param":"colour","type":"invalid_request_error"}})");
  EXPECT_EQ(json::parse(refused("/tokenize", R"({"content":5})"))["error"]["param"], "content");
  EXPECT_EQ(
      json::parse(refused("/tokenize", R"({"content":"a","add_special":"yes"})"))["error"]["code"],
      "invalid_type");
  EXPECT_EQ(json::parse(refused(
                "/tokenize", R"({"messages":[{"role":"king","content":"a"}]})"))["error"]["param"],
            "messages[0].role");
  const int n = tokenizer_of(s).n_vocab();
  EXPECT_EQ(
      refused("/detokenize", R"({"tokens":[1,99999]})"),
      R"({"error":{"code":"invalid_value","message":"Invalid 'tokens': token id 99999 is out of range (the vocabulary has )" +
          std::to_string(n) + R"( tokens).","param":"tokens","type":"invalid_request_error"}})");
  EXPECT_EQ(json::parse(refused("/detokenize", R"({"tokens":[1,"x"]})"))["error"]["code"],
            "invalid_type");
  EXPECT_EQ(json::parse(refused("/detokenize", R"({"tokens":"Hi"})"))["error"]["code"],
            "invalid_type");
  EXPECT_EQ(json::parse(refused("/detokenize", "{}"))["error"]["param"], "tokens");
  const auto r = s.post("/tokenize", {{"content", "a"}, {"model", "nope"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

// The tiny model with a tokenizer.chat_template no family matches.
fs::path model_with_template(const std::string& tmpl) {
  // One file per template, written aside and renamed: ctest runs the cases in parallel.
  const fs::path out =
      server_dir() / ("tiny-template-" + std::to_string(std::hash<std::string>{}(tmpl)) + ".gguf");
  const fs::path tmp = out.string() + "." + std::to_string(::getpid());
  const auto f = sy::gguf::File::open(model_file("f32"));
  sy::gguf::Writer w = sy::test::copy_gguf(*f);
  w.set("tokenizer.chat_template", sy::gguf::Value::of_str(tmpl));
  w.write(tmp);
  fs::rename(tmp, out);
  return out;
}

// A template that is not Jinja the engine parses and names no family: chat refused with the
// reason, completions still served; [model] chat_template then chooses a built-in format.
TEST(ServerTokenize, UnparsableTemplateRefusesChatOnly) {
  const std::string tmpl = "{% for m in messages %}<<{{ m['role'] }}>>{{ m['content'] }}";
  const fs::path model = model_with_template(tmpl);
  const std::string why = sy::text::ChatTemplate::resolve("", tmpl).error();
  ASSERT_NE(why.find("tokenizer.chat_template \"{% for m in messages %}<<{{ m['role'] }}>>"),
            std::string::npos);
  ASSERT_NE(why.find("template line 1: unexpected end of template, expected else or endfor"),
            std::string::npos)
      << why;
  {
    TestServer s("tok-odd", single(model));
    const json msgs = {{{"role", "user"}, {"content", "Hi"}}};
    const auto chat = s.post("/v1/chat/completions", {{"messages", msgs}, {"max_tokens", 2}});
    ASSERT_TRUE(chat);
    EXPECT_EQ(chat->status, 400);
    const json want = {{"error",
                        {{"message", why},
                         {"type", "invalid_request_error"},
                         {"param", "messages"},
                         {"code", "unsupported_chat_template"}}}};
    EXPECT_EQ(json::parse(chat->body), want);
    const auto tok = s.post("/tokenize", {{"messages", msgs}});
    ASSERT_TRUE(tok);
    EXPECT_EQ(json::parse(tok->body), want);
    ok(s.post("/v1/completions", greedy("Hi", 2)));  // completions still work
  }
  // [model] chat_template chooses a family over the file's template.
  TestServer s("tok-odd-named", single(model, "chat_template = \"llama3\"\n"));
  EXPECT_EQ(
      ok(s.post("/tokenize", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}}))["tokens"]
          .get<Ids>(),
      tokenizer_of(s).encode("<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                             "<|start_header_id|>assistant<|end_header_id|>\n\n",
                             false));
}

// The file's own template renders chats, whatever family it is; /apply-template shows the
// render; a template that fails on a conversation is a 400 naming its line.
TEST(ServerTokenize, TheModelsJinjaTemplateRendersChats) {
  const std::string tmpl =
      "{{ bos_token }}{% for m in messages %}"
      "{% if m.role == 'tool' %}{{ raise_exception('no tool turns here') }}{% endif %}"
      "<<{{ m['role'] }}>>{{ m['content'] | trim }}\n{% endfor %}"
      "{% if add_generation_prompt %}<<assistant>>{% endif %}";
  TestServer s("tok-jinja", single(model_with_template(tmpl)));
  const json msgs = {{{"role", "system"}, {"content", "Be brief. "}},
                     {{"role", "user"}, {"content", " Hi"}}};
  const std::string render = "<s><<system>>Be brief.\n<<user>>Hi\n<<assistant>>";
  EXPECT_EQ(ok(s.post("/apply-template", {{"messages", msgs}}))["prompt"], render);
  EXPECT_EQ(ok(s.post("/apply-template",
                      {{"messages", msgs}, {"add_generation_prompt", false}}))["prompt"],
            "<s><<system>>Be brief.\n<<user>>Hi\n");
  // The chat prompt is that render with one BOS: the template's <s> gives way to the
  // tokenizer's, as llama.cpp does.
  const Ids want = tokenizer_of(s).encode(render.substr(3), true);
  EXPECT_EQ(
      ok(s.post("/tokenize", {{"messages", msgs}, {"add_special", true}}))["tokens"].get<Ids>(),
      want);
  const json c = ok(
      s.post("/v1/chat/completions", {{"messages", msgs}, {"max_tokens", 2}, {"temperature", 0}}));
  EXPECT_EQ(c["usage"]["prompt_tokens"], want.size());

  const json tool = {{{"role", "user"}, {"content", "Hi"}}, {{"role", "tool"}, {"content", "x"}}};
  const json failed = {
      {"error",
       {{"message",
         "The model's chat template failed on this conversation: template line 1: no tool turns "
         "here"},
        {"type", "invalid_request_error"},
        {"param", "messages"},
        {"code", "chat_template_error"}}}};
  for (const char* path : {"/apply-template", "/tokenize"}) {
    const auto r = s.post(path, {{"messages", tool}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_EQ(json::parse(r->body), failed) << path;
  }
  const auto bad = s.post_raw("/apply-template", R"({"messages":[{"content":"x"}]})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"]["param"], "messages[0].role");
  const auto unknown = s.post_raw("/apply-template", R"({"messages":[],"colour":1})");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(json::parse(unknown->body)["error"]["code"], "unknown_parameter");
}

// A chat request's tools, tool calls, tool results and chat_template_kwargs reach the model's
// template as transformers passes them: the reference conversations render byte for byte
// through POST /apply-template, with the tool call's arguments sent as OpenAI clients send them
// (a JSON string).
TEST(ServerTokenize, ToolsAndTemplateKwargsReachTheTemplate) {
  const fs::path chat =
      fs::path(SWITCHYARD_SOURCE_DIR) / ".." / "shared" / "ggml-reference" / "chat";
  if (!fs::exists(chat)) GTEST_SKIP() << "no reference data at " << chat;
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  TestServer s("tok-tools",
               single(model_with_template(slurp(chat / "qwen3" / "chat_template.jinja"))));
  using ojson = nlohmann::ordered_json;
  ojson tools = ojson::parse(slurp(chat / "qwen3" / "06-tools.json"));
  for (auto& m : tools["messages"])
    if (m.contains("tool_calls"))
      for (auto& c : m["tool_calls"])
        c["function"]["arguments"] = c["function"]["arguments"].dump();
  const ojson body = {{"messages", tools["messages"]}, {"tools", tools["tools"]}};
  auto prompt = [&](const ojson& b) {
    const auto r = s.post_raw("/apply-template", b.dump());
    EXPECT_TRUE(r);
    if (!r) return std::string();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body)["prompt"].get<std::string>();
  };
  EXPECT_EQ(prompt(body), slurp(chat / "qwen3" / "06-tools.txt"));
  const ojson off = ojson::parse(slurp(chat / "qwen3" / "07-thinking-off.json"));
  EXPECT_EQ(prompt({{"messages", off["messages"]}, {"chat_template_kwargs", off["kwargs"]}}),
            slurp(chat / "qwen3" / "07-thinking-off.txt"));
}

// Chat completions take tools, tool calls and tool results (the qwen3 prompt above outgrows the
// tiny model's context, so a small template shows what the template receives).
TEST(ServerTokenize, ChatRequestsCarryToolsToTheTemplate) {
  const std::string tmpl =
      "{% for m in messages %}{{ m.role }}:{{ m.content or '' }}"
      "{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}|{% endfor %}"
      "{% if tools %}{{ tools | map(attribute='function') | map(attribute='name') | join(',') }}"
      "{% endif %}{{ reasoning_effort }}";
  TestServer s("tok-tools-chat", single(model_with_template(tmpl)));
  using ojson = nlohmann::ordered_json;
  ojson req = ojson::parse(R"({
    "messages": [{"role": "user", "content": "hi"},
                 {"role": "assistant", "content": null,
                  "tool_calls": [{"id": "c1", "type": "function",
                                  "function": {"name": "f", "arguments": "{\"y\": 2, \"x\": 1}"}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "3"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "reasoning_effort": "low"})");
  auto r = s.post_raw("/apply-template", req.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  // The arguments reach the template as an object, in the client's key order.
  EXPECT_EQ(json::parse(r->body)["prompt"],
            "user:hi|assistant:[{\"id\": \"c1\", \"type\": \"function\", \"function\": "
            "{\"name\": \"f\", \"arguments\": {\"y\": 2, \"x\": 1}}}]|tool:3|flow");
  req["max_tokens"] = 2;
  req["tool_choice"] = "auto";
  r = s.post_raw("/v1/chat/completions", req.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // This template writes no tool-call syntax, so a call cannot be required of it.
  req["tool_choice"] = "required";
  r = s.post_raw("/v1/chat/completions", req.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "unsupported_value");
  req["tool_choice"] = "auto";
  req["messages"][1]["tool_calls"][0]["function"]["arguments"] = "{\"x\": 1";
  r = s.post_raw("/v1/chat/completions", req.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["message"],
            "Invalid 'messages[1].tool_calls[0].function.arguments': expected a JSON object "
            "encoded as a string, got '{\"x\": 1'.");
  req["messages"][1]["tool_calls"][0].erase("function");
  r = s.post_raw("/v1/chat/completions", req.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["param"], "messages[1].tool_calls[0].function");
}

// usage.prompt_tokens_details.cached_tokens: what the prefix cache held of the prompt.
TEST(ServerTokenize, UsageReportsCachedPromptTokens) {
  std::string t =
      variant_tables("", "dynamic", "", {}, "kv_block_size = 16\nprefix_caching = true\n");
  TestServer s("tok-cached", plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" + t);
  const std::string prompt(200, 'a');  // 200 byte tokens + BOS: 12 full blocks
  json first = ok(s.post("/v1/completions", greedy(prompt, 2)));
  EXPECT_EQ(first["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  json again = ok(s.post("/v1/completions", greedy(prompt, 2)));
  const uint32_t n = first["usage"]["prompt_tokens"];
  const uint32_t cached = again["usage"]["prompt_tokens_details"]["cached_tokens"];
  EXPECT_EQ(cached, (n - 1) / 16 * 16) << "whole blocks, the last token recomputed";
  EXPECT_EQ(again["choices"][0]["text"], first["choices"][0]["text"]);
}

TEST(ServerTokenize, ChatTemplateKeyIsChecked) {
  const std::string toml = "[model]\npath = \"m.gguf\"\nchat_template = \"chatml2\"\n";
  try {
    sy::parse_config(toml, "x.toml");
    ADD_FAILURE() << "an unknown chat template name was accepted";
  } catch (const sy::ConfigError& e) {
    std::string names;
    for (const auto& n : sy::text::chat_format_names()) names += (names.empty() ? "" : ", ") + n;
    EXPECT_EQ(std::string(e.what()),
              "x.toml:3:17: model.chat_template: unknown chat template "
              "'chatml2' (expected one of: " +
                  names + ")");
  }
  const std::string good =
      "[model]\npath = \"m.gguf\"\nchat_template = \"gemma\"\n"
      "[backend]\nplugin = \"cpu_ref\"\n[scheduler]\nplugin = \"fixed_window\"\n";
  EXPECT_EQ(sy::parse_config(good, "x.toml").model.chat_template, "gemma");
}

TEST(ServerTokenize, ChatTemplateFileReplacesTheFilesOwn) {
  const std::string tail =
      "[backend]\nplugin = \"cpu_ref\"\n[scheduler]\nplugin = \"fixed_window\"\n";
  auto error = [&](const std::string& model) {
    try {
      sy::parse_config("[model]\npath = \"m.gguf\"\n" + model + tail, "x.toml");
    } catch (const sy::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(error("chat_template_file = \"/nonexistent/t.jinja\"\n"),
            "x.toml:3:22: model.chat_template_file: cannot read a template from "
            "'/nonexistent/t.jinja'");
  const fs::path file = server_dir() / ("own-" + std::to_string(::getpid()) + ".jinja");
  { std::ofstream(file) << "{% for m in messages %}[{{ m.content }}]{% endfor %}"; }
  EXPECT_EQ(error("chat_template = \"gemma\"\nchat_template_file = \"" + file.string() + "\"\n"),
            "x.toml:4:22: model.chat_template_file: set chat_template or chat_template_file, not "
            "both");
  // Served: the chat is rendered by the configured template, not the file's own.
  TestServer s("tok-template-file", plugin_dirs_line() +
                                        "[serve]\nmodel_name = \"tiny\"\n[model]\npath = \"" +
                                        model_file("f32").string() + "\"\nchat_template_file = \"" +
                                        file.string() + "\"\n" + tail);
  const json r =
      ok(s.post("/apply-template", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}));
  EXPECT_EQ(r["prompt"], "[hi]");
  fs::remove(file);
}

}  // namespace
