// The OpenAI request features end to end on a tiny model: n choices (each the same as a single
// request with seed + index), stop strings and stop token ids (cut where a decode of the tokens
// says, whole and streamed), logprobs in both shapes, logit_bias, echo, response_format text,
// system_fingerprint, models.retrieve, max_completion_tokens over max_tokens, and every other
// field refused by name. Also the pieces: stop matching, the request parser, the HTTP parser.
#include <sstream>

#include "gguf/gguf.h"
#include "host/backend.h"
#include "host/plugin_host.h"
#include "model/evaluate.h"
#include "model/model.h"
#include "raw_http.h"
#include "server/api_error.h"
#include "server/choice_text.h"
#include "server/http/request_parser.h"
#include "server/openai_request.h"
#include "server_fixture.h"
#include "text/tokenizer.h"

namespace {

using namespace sy::test;

std::string config(const std::string& serve = "") {
  return plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" + serve +
         variant_tables("", "dynamic", "");
}

// What a JSON round trip makes of `s` (invalid UTF-8 from random weights becomes U+FFFD).
std::string as_json_text(const std::string& s) {
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

// A token's text as logprobs spell it: itself, or "bytes:\xNN" when it is not valid UTF-8.
std::string logprob_text(const sy::text::Tokenizer& tok, int32_t id) {
  const std::string p = tok.piece(id);
  if (as_json_text(p) == p) return p;  // valid UTF-8, judged by the JSON library
  std::string out = "bytes:";
  for (unsigned char c : p) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out;
}

const sy::text::Tokenizer& tokenizer_of(const TestServer& s) {
  return *s.server->router().current()->variants[0].runner->tokenizer();
}

TEST(OpenAiFeatures, NChoicesEachEqualASingleRequestWithSeedPlusIndex) {
  TestServer s("n-choices", config());
  json req = {{"prompt", "choose"}, {"max_tokens", 6}, {"temperature", 1.0},
              {"seed", 40},         {"n", 3},          {"ignore_eos", true}};
  auto r = s.post("/v1/completions", req);
  ASSERT_EQ(r->status, 200) << r->body;
  const json whole = json::parse(r->body);
  ASSERT_EQ(whole["choices"].size(), 3u);
  EXPECT_EQ(whole["usage"]["completion_tokens"], 18);
  std::set<std::vector<int32_t>> distinct;
  for (int i = 0; i < 3; ++i) {
    const json& c = whole["choices"][i];
    EXPECT_EQ(c["index"], i);
    json one = req;
    one["n"] = 1;
    one["seed"] = 40 + i;
    auto single = s.post("/v1/completions", one);
    ASSERT_EQ(single->status, 200);
    EXPECT_EQ(c["token_ids"], json::parse(single->body)["choices"][0]["token_ids"]) << i;
    distinct.insert(c["token_ids"].get<std::vector<int32_t>>());
  }
  EXPECT_EQ(distinct.size(), 3u);

  // Streamed: each choice's chunks carry its index; together they spell the same tokens.
  req["stream"] = true;
  req["stream_options"] = {{"include_usage", true}};
  r = s.post("/v1/completions", req);
  const auto ev = events(r->body);
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev.back(), "[DONE]");
  EXPECT_EQ(json::parse(ev[ev.size() - 2])["usage"]["completion_tokens"], 18);
  std::vector<std::vector<int32_t>> streamed(3);
  std::vector<int> finishes(3, 0);
  for (size_t i = 0; i + 2 < ev.size(); ++i) {
    const json c = json::parse(ev[i])["choices"][0];
    const int idx = c["index"];
    for (int t : c.value("token_ids", json::array())) streamed[idx].push_back(t);
    if (!c["finish_reason"].is_null()) ++finishes[idx];
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(json(streamed[i]), whole["choices"][i]["token_ids"]);
    EXPECT_EQ(finishes[i], 1);
  }
}

// The first token of a greedy run whose text is one printable ASCII character that does not
// occur earlier; -1 if none.
int first_fresh_ascii(const sy::text::Tokenizer& tok, const std::vector<int32_t>& ids) {
  for (size_t k = 1; k < ids.size(); ++k) {
    const std::string p = tok.piece(ids[k]);
    const std::string before = tok.decode({ids.begin(), ids.begin() + k});
    if (p.size() == 1 && p[0] > 0x20 && p[0] < 0x7f && before.find(p) == std::string::npos)
      return static_cast<int>(k);
  }
  return -1;
}

TEST(OpenAiFeatures, StopStringsAndStopTokensEndTheChoiceWhereTheTextSays) {
  TestServer s("stop", config());
  const auto& tok = tokenizer_of(s);
  const std::string prompt = "the yard";
  auto r = s.post("/v1/completions", greedy(prompt, 40));
  ASSERT_EQ(r->status, 200);
  const std::vector<int32_t> ids = token_ids(json::parse(r->body));
  const int k = first_fresh_ascii(tok, ids);
  ASSERT_GE(k, 1) << "the greedy output has no fresh printable character";
  const std::string stop = tok.piece(ids[k]);
  const std::vector<int32_t> upto(ids.begin(), ids.begin() + k + 1);
  const std::string text_before = tok.decode({ids.begin(), ids.begin() + k});

  json req = greedy(prompt, 40);
  req["stop"] = {"never-there", stop};
  r = s.post("/v1/completions", req);
  ASSERT_EQ(r->status, 200) << r->body;
  json c = json::parse(r->body)["choices"][0];
  EXPECT_EQ(c["finish_reason"], "stop");
  EXPECT_EQ(c["token_ids"], json(upto));  // the token that completed the match is the last
  EXPECT_EQ(c["text"], as_json_text(text_before));
  EXPECT_EQ(json::parse(r->body)["usage"]["completion_tokens"], k + 1);

  req["stream"] = true;
  r = s.post("/v1/completions", req);
  std::string streamed;
  std::vector<int32_t> streamed_ids;
  const auto ev = events(r->body);
  for (size_t i = 0; i + 1 < ev.size(); ++i) {
    const json e = json::parse(ev[i])["choices"][0];
    streamed += e["text"].get<std::string>();
    for (int t : e.value("token_ids", json::array())) streamed_ids.push_back(t);
    if (i + 2 == ev.size()) {
      EXPECT_EQ(e["finish_reason"], "stop");
    }
  }
  EXPECT_EQ(streamed_ids, upto);
  EXPECT_EQ(as_json_text(streamed), as_json_text(text_before));

  // A stop token id ends the choice at that token; its text is not returned.
  json by_id = greedy(prompt, 40);
  by_id["stop_token_ids"] = {ids[k]};
  r = s.post("/v1/completions", by_id);
  c = json::parse(r->body)["choices"][0];
  EXPECT_EQ(c["finish_reason"], "stop");
  EXPECT_EQ(c["token_ids"], json(upto));
  EXPECT_EQ(c["text"], as_json_text(text_before));

  // Chat takes stop too.
  const json chat = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                     {"max_tokens", 30},
                     {"ignore_eos", true}};
  r = s.post("/v1/chat/completions", chat);
  const std::vector<int32_t> cids = token_ids(json::parse(r->body));
  const int ck = first_fresh_ascii(tok, cids);
  if (ck >= 1) {
    json cs = chat;
    cs["stop"] = tok.piece(cids[ck]);
    r = s.post("/v1/chat/completions", cs);
    const json m = json::parse(r->body)["choices"][0];
    EXPECT_EQ(m["finish_reason"], "stop");
    EXPECT_EQ(m["message"]["content"], as_json_text(tok.decode({cids.begin(), cids.begin() + ck})));
  }
}

TEST(OpenAiFeatures, LogprobsInTheCompletionAndChatShapes) {
  TestServer s("logprobs", config());
  const auto& tok = tokenizer_of(s);
  json req = greedy("probe", 5);
  req["logprobs"] = 3;
  auto r = s.post("/v1/completions", req);
  ASSERT_EQ(r->status, 200) << r->body;
  const json c = json::parse(r->body)["choices"][0];
  const auto ids = token_ids(json::parse(r->body));
  const json& lp = c["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 5u);
  size_t last_offset = 0;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lp["tokens"][i], logprob_text(tok, ids[i]));
    const double chosen = lp["token_logprobs"][i];
    EXPECT_LE(chosen, 0.0);
    double best = -1e9, mass = 0;
    for (const auto& [t, v] : lp["top_logprobs"][i].items()) {
      best = std::max(best, v.get<double>());
      mass += std::exp(v.get<double>());
    }
    EXPECT_EQ(chosen, best) << i;  // greedy takes the most likely token
    EXPECT_LE(mass, 1.0 + 1e-6);
    EXPECT_GE(lp["top_logprobs"][i].size(), 1u);
    EXPECT_LE(lp["top_logprobs"][i].size(), 4u);  // 3 alternatives and the sampled token
    // Bytes of the text before the token (a token inside a split character shares its start).
    const size_t offset = lp["text_offset"][i];
    EXPECT_GE(offset, last_offset);
    EXPECT_LE(offset, tok.decode({ids.begin(), ids.begin() + i}).size());
    last_offset = offset;
  }
  EXPECT_EQ(lp["text_offset"][0], 0);
  // Seeded sampling reports the same logprobs whole and streamed.
  req["temperature"] = 1.0;
  req["seed"] = 9;
  const json whole = json::parse(s.post("/v1/completions", req)->body)["choices"][0]["logprobs"];
  req["stream"] = true;
  std::vector<double> streamed;
  for (const auto& e : events(s.post("/v1/completions", req)->body)) {
    if (e == "[DONE]") continue;
    const json ch = json::parse(e)["choices"][0];
    if (!ch["logprobs"].is_null())
      for (const auto& v : ch["logprobs"]["token_logprobs"]) streamed.push_back(v);
  }
  EXPECT_EQ(json(streamed), whole["token_logprobs"]);

  const json chat = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                     {"max_tokens", 3},
                     {"ignore_eos", true},
                     {"logprobs", true},
                     {"top_logprobs", 2}};
  r = s.post("/v1/chat/completions", chat);
  ASSERT_EQ(r->status, 200) << r->body;
  const json chat_doc = json::parse(r->body);
  const json& content = chat_doc["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 3u);
  const auto chat_ids = token_ids(json::parse(r->body));
  for (size_t j = 0; j < content.size(); ++j) {
    const json& e = content[j];
    EXPECT_EQ(e["top_logprobs"].size(), 2u);
    EXPECT_EQ(e["logprob"], e["top_logprobs"][0]["logprob"]);  // greedy: the most likely
    const std::string piece = tok.piece(chat_ids[j]);
    EXPECT_EQ(e["bytes"], json(std::vector<uint8_t>(piece.begin(), piece.end())));
  }
  json no_lp = chat;
  no_lp.erase("top_logprobs");
  no_lp["logprobs"] = false;
  EXPECT_TRUE(
      json::parse(s.post("/v1/chat/completions", no_lp)->body)["choices"][0]["logprobs"].is_null());
}

TEST(OpenAiFeatures, LogitBiasPenaltiesEchoAndFormat) {
  TestServer s("bias", config());
  const auto& tok = tokenizer_of(s);
  json req = greedy("bias", 6);
  const auto plain = token_ids(json::parse(s.post("/v1/completions", req)->body));
  req["logit_bias"] = {{"77", 100}};
  EXPECT_EQ(token_ids(json::parse(s.post("/v1/completions", req)->body)),
            std::vector<int32_t>(6, 77));
  req["logit_bias"] = {{std::to_string(plain[0]), -100}};
  EXPECT_NE(token_ids(json::parse(s.post("/v1/completions", req)->body))[0], plain[0]);
  req["logit_bias"] = {{"99999", 1}};
  auto r = s.post("/v1/completions", req);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"invalid_value","message":"Invalid 'logit_bias': token id 99999 is outside the vocabulary of )" +
          std::to_string(tok.n_vocab()) +
          R"( tokens.","param":"logit_bias","type":"invalid_request_error"}})");

  // A frequency penalty makes a greedy run that repeats a token pick another.
  json rep = greedy("bias", 40);
  const auto rep_ids = token_ids(json::parse(s.post("/v1/completions", rep)->body));
  rep["frequency_penalty"] = 2.0;
  rep["presence_penalty"] = 2.0;
  const auto pen_ids = token_ids(json::parse(s.post("/v1/completions", rep)->body));
  std::map<int32_t, int> most_rep, most_pen;
  for (int32_t t : rep_ids) ++most_rep[t];
  for (int32_t t : pen_ids) ++most_pen[t];
  int max_rep = 0, max_pen = 0;
  for (auto& [t, n] : most_rep) max_rep = std::max(max_rep, n);
  for (auto& [t, n] : most_pen) max_pen = std::max(max_pen, n);
  if (max_rep > 1) {
    EXPECT_LT(max_pen, max_rep);
  }
  EXPECT_NE(pen_ids, rep_ids);

  // echo: the prompt text comes first, for text and for token-id prompts.
  json echo = greedy("Echo me", 3);
  echo["echo"] = true;
  const json e = json::parse(s.post("/v1/completions", echo)->body)["choices"][0];
  const auto e_ids = e["token_ids"].get<std::vector<int32_t>>();
  EXPECT_EQ(e["text"], as_json_text("Echo me" + tok.decode(e_ids)));
  echo["prompt"] = tok.encode("Echo me", true);
  EXPECT_EQ(json::parse(s.post("/v1/completions", echo)->body)["choices"][0]["text"],
            as_json_text(tok.decode(tok.encode("Echo me", true)) + tok.decode(e_ids)));

  json fmt = {{"messages", {{{"role", "user"}, {"content", "x"}}}},
              {"max_tokens", 2},
              {"response_format", {{"type", "text"}}}};
  EXPECT_EQ(s.post("/v1/chat/completions", fmt)->status, 200);
  fmt["response_format"] = {{"type", "json_object"}};  // test_server_structured.cpp
  EXPECT_EQ(s.post("/v1/chat/completions", fmt)->status, 200);
}

// lm-eval's loglikelihood request: echo, logprobs and max_tokens 0 score a prompt without
// generating; each token's logprob is the log softmax of the logits `switchyard eval` gives at
// the position before it (model::evaluate, the whole prompt in one batch), to 1e-4.
TEST(OpenAiFeatures, EchoLogprobsScoreThePromptAsEvalDoes) {
  TestServer s("echo-score", config());
  const auto& tok = tokenizer_of(s);
  const std::vector<int32_t> prompt = tok.encode("The quick brown fox jumps over the dog", true);
  json req = {
      {"prompt", prompt}, {"echo", true}, {"logprobs", 2}, {"max_tokens", 0}, {"temperature", 0}};
  const auto res = s.post("/v1/completions", req);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  const json r = json::parse(res->body);
  const json& c = r["choices"][0];
  ASSERT_TRUE(c.contains("logprobs")) << r.dump();
  EXPECT_EQ(c["text"], as_json_text(tok.decode(prompt)));
  EXPECT_EQ(c["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["completion_tokens"], 0);
  EXPECT_EQ(r["usage"]["prompt_tokens"], prompt.size());
  const json& lp = c["logprobs"];
  ASSERT_EQ(lp["token_logprobs"].size(), prompt.size());
  EXPECT_TRUE(lp["token_logprobs"][0].is_null());
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());

  sy::PluginHost host({SWITCHYARD_PLUGIN_DIR});
  sy::Backend backend(host.load(SY_PLUGIN_BACKEND, "cpu_ref"), sy::Params{});
  const auto file = sy::gguf::File::open(model_file("f32"));
  auto model = sy::model::load_model(*file, backend);
  const auto ev = sy::model::evaluate(*model, backend, prompt, 0);
  const size_t V = ev.logits.size() / prompt.size();
  for (size_t i = 1; i < prompt.size(); ++i) {
    const float* row = ev.logits.data() + (i - 1) * V;
    double mx = row[0], sum = 0;
    for (size_t v = 0; v < V; ++v) mx = std::max(mx, double(row[v]));
    for (size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - mx);
    const double want = double(row[prompt[i]]) - mx - std::log(sum);
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), want, 1e-4) << i;
    EXPECT_EQ(lp["tokens"][i], logprob_text(tok, prompt[i]));
    EXPECT_LE(lp["top_logprobs"][i].size(), 3u);  // two alternatives and the token itself
  }
  // With a completion after it, the generated tokens follow the prompt's; and the prompt's
  // scores do not depend on a prefix cache (the same request again).
  req["max_tokens"] = 3;
  const json g = json::parse(s.post("/v1/completions", req)->body)["choices"][0];
  ASSERT_EQ(g["logprobs"]["token_logprobs"].size(), prompt.size() + 3);
  for (size_t i = 1; i < prompt.size(); ++i)
    EXPECT_NEAR(g["logprobs"]["token_logprobs"][i].get<double>(),
                lp["token_logprobs"][i].get<double>(), 1e-5);
  // Streamed, the echo is the first chunk, with the prompt's logprobs, then the tokens': the
  // same text, logprobs and offsets as the whole answer, with and without a completion.
  for (const uint32_t n : {3u, 0u}) {
    req["max_tokens"] = n;
    req["stream"] = false;
    const json want = json::parse(s.post("/v1/completions", req)->body)["choices"][0];
    req["stream"] = true;
    const auto res = s.post("/v1/completions", req);
    ASSERT_EQ(res->status, 200) << res->body;
    std::string text;
    json lps = json::array(), offsets = json::array();
    size_t chunks = 0;
    for (const auto& e : events(res->body)) {
      if (e == "[DONE]") continue;
      const json ch = json::parse(e)["choices"][0];
      if (chunks++ == 0) {
        EXPECT_EQ(ch["text"], as_json_text(tok.decode(prompt)));  // the echo
      }
      text += ch["text"].get<std::string>();
      if (!ch["logprobs"].is_null())
        for (size_t k = 0; k < ch["logprobs"]["token_logprobs"].size(); ++k) {
          lps.push_back(ch["logprobs"]["token_logprobs"][k]);
          offsets.push_back(ch["logprobs"]["text_offset"][k]);
        }
    }
    EXPECT_EQ(text, want["text"]) << n;
    EXPECT_EQ(lps, want["logprobs"]["token_logprobs"]) << n;
    EXPECT_EQ(offsets, want["logprobs"]["text_offset"]) << n;
    ASSERT_EQ(lps.size(), prompt.size() + n);
    EXPECT_TRUE(lps[0].is_null());
  }
  // max_tokens 0 without echo is refused.
  auto bad = s.post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 0}});
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"]["message"],
            "Invalid 'max_tokens': 0 is only allowed with 'echo' (the prompt scored, nothing "
            "generated).");
}

TEST(OpenAiFeatures, FingerprintModelsRetrieveAndMaxCompletionTokens) {
  TestServer s("fingerprint", config());
  const json a = json::parse(s.post("/v1/completions", greedy("f", 2))->body);
  const json b = json::parse(s.post("/v1/completions", greedy("g", 2))->body);
  ASSERT_TRUE(a["system_fingerprint"].is_string());
  EXPECT_EQ(a["system_fingerprint"].get<std::string>().rfind("fp_", 0), 0u);
  EXPECT_EQ(a["system_fingerprint"], b["system_fingerprint"]);

  auto r = s.client->Get("/v1/models/tiny");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["id"], "tiny");
  EXPECT_EQ(json::parse(s.client->Get("/v1/models/default")->body)["parent"], "tiny");
  r = s.client->Get("/v1/models/gpt-4o");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"model_not_found","message":"The model 'gpt-4o' does not exist","param":"model","type":"invalid_request_error"}})");

  const json both = {{"messages", {{{"role", "user"}, {"content", "x"}}}},
                     {"max_tokens", 9},
                     {"max_completion_tokens", 3},
                     {"ignore_eos", true}};
  EXPECT_EQ(token_ids(json::parse(s.post("/v1/chat/completions", both)->body)).size(), 3u);
}

// Every other field the SDK can send is refused by name when it would change the answer.
TEST(OpenAiFeatures, FieldsNotHonouredAreRefusedByName) {
  struct Case {
    bool chat;
    std::string field, body;
    std::string code, message;
  };
  const std::string m = R"("messages": [{"role": "user", "content": "x"}])";
  const std::vector<Case> cases = {
      {false, "suffix", R"({"prompt": "x", "suffix": "y"})", "unsupported_parameter",
       "'suffix' is not supported by this server."},
      {false, "best_of", R"({"prompt": "x", "best_of": 3})", "unsupported_value",
       "Invalid 'best_of': only best_of equal to n (1) is supported, got 3."},
      {true, "tools[0].function", "{" + m + R"(, "tools": [{"type": "function"}]})",
       "invalid_value", "Invalid 'tools[0].function': required property is missing."},
      {true, "tool_choice", "{" + m + R"(, "tool_choice": "required"})", "invalid_value",
       "Invalid 'tool_choice': 'required' or a named function needs 'tools'."},
      {true, "functions", "{" + m + R"(, "functions": [{"name": "f"}]})", "unsupported_parameter",
       "'functions' is not supported by this server."},
      {true, "audio", "{" + m + R"(, "audio": {"voice": "alloy"}})", "unsupported_parameter",
       "'audio' is not supported by this server."},
      {true, "modalities", "{" + m + R"(, "modalities": ["audio"]})", "unsupported_parameter",
       "'modalities' is not supported by this server."},
      {true, "store", "{" + m + R"(, "store": true})", "unsupported_parameter",
       "'store' is not supported by this server."},
      {true, "metadata", "{" + m + R"(, "metadata": {"a": "b"}})", "unsupported_parameter",
       "'metadata' is not supported by this server."},
      {true, "prediction", "{" + m + R"(, "prediction": {"type": "content"}})",
       "unsupported_parameter", "'prediction' is not supported by this server."},
      {true, "reasoning_effort", "{" + m + R"(, "reasoning_effort": 5})", "invalid_type",
       "Invalid type for 'reasoning_effort': expected a string, but got an integer instead."},
      {true, "service_tier", "{" + m + R"(, "service_tier": "flex"})", "unsupported_parameter",
       "'service_tier' is not supported by this server: only 'auto' and 'default' are."},
      {true, "web_search_options", "{" + m + R"(, "web_search_options": {"x": 1}})",
       "unsupported_parameter", "'web_search_options' is not supported by this server."},
      {true, "verbosity", "{" + m + R"(, "verbosity": "low"})", "unsupported_parameter",
       "'verbosity' is not supported by this server."},
      {true, "top_logprobs", "{" + m + R"(, "top_logprobs": 2})", "invalid_value",
       "Invalid 'top_logprobs': 'logprobs' must be true when 'top_logprobs' is set."},
      {true, "stream_options.include_obfuscation",
       "{" + m + R"(, "stream_options": {"include_obfuscation": true}})", "unknown_parameter",
       "Unrecognized request argument supplied: stream_options.include_obfuscation"},
      {true, "messages[0].tool_calls",
       R"({"messages": [{"role": "user", "content": "x", "tool_calls": []}]})", "invalid_value",
       "Invalid 'messages[0].tool_calls': only assistant messages carry tool calls."},
      {true, "messages[0].refusal",
       R"({"messages": [{"role": "assistant", "content": "x", "refusal": "no"}]})", "",
       "Unrecognized request argument supplied: messages[0].refusal"},
  };
  for (const auto& c : cases) {
    try {
      sy::server::parse_completion_request(c.body, c.chat);
      ADD_FAILURE() << "accepted " << c.field;
    } catch (const sy::server::ApiError& e) {
      EXPECT_EQ(e.status, 400) << c.field;
      EXPECT_EQ(e.param, c.field);
      EXPECT_EQ(e.code, c.code) << c.field;
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
  // At their neutral values they change nothing and are accepted.
  const auto r = sy::server::parse_completion_request(
      "{" + m +
          R"(, "tools": [], "tool_choice": "none", "store": false, "parallel_tool_calls": true, "service_tier": "auto", "user": "u", "response_format": {"type": "text"}, "n": 2, "stop": ["a", "b"], "stop_token_ids": [3], "logprobs": true, "top_logprobs": 4, "presence_penalty": 1.5, "frequency_penalty": -0.5, "logit_bias": {"7": -3}, "seed": 11, "max_tokens": 9, "max_completion_tokens": 4})",
      true);
  EXPECT_EQ(r.n, 2u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.stop_token_ids, (std::vector<int32_t>{3}));
  EXPECT_EQ(r.logprobs, 4);
  EXPECT_FLOAT_EQ(r.presence_penalty, 1.5f);
  EXPECT_FLOAT_EQ(r.frequency_penalty, -0.5f);
  EXPECT_EQ(r.logit_bias, (std::vector<std::pair<int32_t, float>>{{7, -3.0f}}));
  EXPECT_EQ(*r.max_tokens, 4u);
  EXPECT_EQ(r.max_tokens_param, "max_completion_tokens");
}

// ---- the pieces ----

std::unique_ptr<sy::text::Tokenizer> byte_tokenizer() {
  auto v = sy::text::byte_level_vocab(300);
  v.add_space_prefix = false;
  return sy::text::Tokenizer::create(v);
}

// The ids of `s`, one byte token each.
std::vector<int32_t> ids_of(const sy::text::Tokenizer& tok, const std::string& s) {
  return tok.encode(s, false);
}

TEST(ChoiceText, HoldsBackPossibleStartsAndCutsBeforeTheMatch) {
  const auto tok = byte_tokenizer();
  sy::server::ChoiceText t(*tok, {"STOP", "xyz"}, {});
  std::string out;
  std::vector<std::string> steps;
  for (int32_t id : ids_of(*tok, "abST")) steps.push_back(t.push(id));
  EXPECT_EQ(steps, (std::vector<std::string>{"a", "b", "", ""}));  // "ST" may begin "STOP"
  EXPECT_EQ(t.push(ids_of(*tok, "x")[0]), "ST");  // "STx" begins no stop; "x" may begin "xyz"
  EXPECT_FALSE(t.stopped());
  EXPECT_EQ(t.push(ids_of(*tok, "y")[0]), "");
  EXPECT_EQ(t.push(ids_of(*tok, "z")[0]), "");
  EXPECT_TRUE(t.stopped());
  EXPECT_EQ(t.push(ids_of(*tok, "q")[0]), "");  // ignored after the match
  EXPECT_EQ(t.finish(), "");

  sy::server::ChoiceText u(*tok, {"STOP"}, {});
  for (int32_t id : ids_of(*tok, "okST")) out += u.push(id);
  out += u.finish();  // ended without a match: the held-back "ST" is text
  EXPECT_EQ(out, "okST");

  const auto q = ids_of(*tok, "Q");
  sy::server::ChoiceText v(*tok, {"ab"}, {q[0]});
  EXPECT_EQ(v.push(ids_of(*tok, "a")[0]), "");
  EXPECT_EQ(v.push(q[0]), "a");  // the stop token releases what was held, not its own text
  EXPECT_TRUE(v.stopped());
  // A match spanning two tokens, inside one: cut at its start.
  sy::server::ChoiceText w(*tok, {"lo w"}, {});
  out.clear();
  for (int32_t id : ids_of(*tok, "hello world")) out += w.push(id);
  EXPECT_EQ(out, "hel");
  EXPECT_TRUE(w.stopped());
}

TEST(HttpParser, FramingAndLimitsOnAnySplit) {
  using sy::server::http::RequestParser;
  const std::string req =
      "POST /v1/x?q=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: v\r\n\r\nGET /next HTTP/1.1\r\n\r\n";
  // Whatever the split of the bytes, the same request comes out and the next stays buffered.
  for (size_t step : {1u, 2u, 7u, 1000u}) {
    RequestParser p;
    std::string buf;
    RequestParser::Step st = RequestParser::Step::need_more;
    for (size_t at = 0; at < req.size() && st != RequestParser::Step::done; at += step) {
      buf += req.substr(at, step);
      do st = p.feed(buf);
      while (st == RequestParser::Step::head_ready);
      ASSERT_NE(st, RequestParser::Step::error) << p.error().message;
    }
    ASSERT_EQ(st, RequestParser::Step::done) << step;
    EXPECT_EQ(p.request().method, "POST");
    EXPECT_EQ(p.request().path, "/v1/x");
    EXPECT_EQ(p.request().query, "q=1");
    EXPECT_EQ(p.request().body, "abcde");
    EXPECT_EQ(p.request().get_header_value("host"), "h");
  }
  auto refuse = [](const std::string& bytes, sy::server::http::ParseLimits lim = {}) {
    RequestParser p(lim);
    std::string buf = bytes;
    RequestParser::Step st;
    do st = p.feed(buf);
    while (st == RequestParser::Step::head_ready);
    return st == RequestParser::Step::error
               ? std::to_string(p.error().status) + " " + p.error().message
               : "accepted";
  };
  sy::server::http::ParseLimits small;
  small.max_body_bytes = 10;
  EXPECT_EQ(
      refuse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n3\r\n", small),
      "413 The request body is larger than 10 bytes.");
  EXPECT_EQ(refuse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n"),
            "400 Malformed chunked body: bad chunk size.");
  EXPECT_EQ(refuse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX"),
            "400 Malformed chunked body: missing CRLF after chunk data.");
  EXPECT_EQ(refuse("GET / HTTP/1.1\r\n Folded: x\r\n\r\n"),
            "400 Folded header lines are not accepted.");
  EXPECT_EQ(refuse("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"),
            "400 Malformed header field: expected 'Name: value'.");
  EXPECT_EQ(refuse("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"),
            "400 The request head contains a bare CR or a NUL byte.");
  EXPECT_EQ(refuse("GET / HTTP/1.1\r\nExpect: magic\r\n\r\n"),
            "417 Expectation 'magic' is not supported.");
  EXPECT_EQ(refuse("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "400 Transfer-Encoding is not allowed in an HTTP/1.0 request.");
  EXPECT_EQ(refuse("\r\n\r\nGET / HTTP/1.1\r\n\r\n"), "accepted");  // leading empty lines
}

}  // namespace
