// The HTTP server end to end on 127.0.0.1: completions whole and streamed (SSE), chat, models,
// health, metrics; every refusal with its exact OpenAI-shaped body while the server keeps
// serving; the queue bound (429), the request timeout (504) and client disconnects, which
// cancel the request and free its KV blocks.
#include <sstream>

#include "host/host_api.h"
#include "raw_http.h"
#include "server_fixture.h"

namespace {

using namespace sy::test;

std::string single(const std::string& sched, const std::string& params,
                   const std::string& serve = "", const sy::test::fs::path& model = {},
                   const std::string& engine = "") {
  return plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" + serve +
         variant_tables("", sched, params, model, engine);
}

TEST(ServerHttp, CompletionWholeAndStreamedGiveTheSameTokens) {
  TestServer s("http-basic", single("dynamic", ""));
  auto r = s.post("/v1/completions", greedy("The switchyard", 10));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json whole = json::parse(r->body);
  EXPECT_EQ(whole["object"], "text_completion");
  EXPECT_EQ(whole["model"], "tiny");
  EXPECT_EQ(whole["variant"], "default");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
  const auto tokens = token_ids(whole);
  ASSERT_EQ(tokens.size(), 10u);
  EXPECT_EQ(whole["usage"]["completion_tokens"], 10);
  EXPECT_EQ(whole["usage"]["total_tokens"], whole["usage"]["prompt_tokens"].get<int>() + 10);
  EXPECT_EQ(r->get_header_value("X-Switchyard-Variant"), "default");

  json req = greedy("The switchyard", 10);
  req["stream"] = true;
  req["stream_options"] = {{"include_usage", true}};
  r = s.post("/v1/completions", req);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  const auto ev = events(r->body);
  ASSERT_EQ(ev.size(), 13u);  // 10 tokens, the finish, the usage, [DONE]
  std::vector<int32_t> streamed;
  std::string text;
  for (size_t i = 0; i < 10; ++i) {
    const json c = json::parse(ev[i]);
    EXPECT_EQ(c["choices"][0]["finish_reason"], nullptr);
    for (int t : c["choices"][0]["token_ids"]) streamed.push_back(t);
    text += c["choices"][0]["text"].get<std::string>();
  }
  const json fin = json::parse(ev[10]);
  text += fin["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(json::parse(ev[11])["usage"]["completion_tokens"], 10);
  EXPECT_EQ(ev[12], "[DONE]");
  EXPECT_EQ(streamed, tokens);
  EXPECT_EQ(text, whole["choices"][0]["text"].get<std::string>());

  // The same prompt as token ids gives the same continuation.
  const auto* tok = s.server->router().current()->variants[0].runner->tokenizer();
  json ids = greedy("", 10);
  ids["prompt"] = tok->encode("The switchyard", true);
  r = s.post("/v1/completions", ids);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(token_ids(json::parse(r->body)), tokens);
}

TEST(ServerHttp, ChatModelsHealthAndMetrics) {
  TestServer s("http-chat", single("fixed_window", "max_batch = 4\nwait_window_ms = 1\n"));
  auto r = s.post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                           {"max_tokens", 4},
                                           {"ignore_eos", true}});
  ASSERT_EQ(r->status, 200) << r->body;
  const json c = json::parse(r->body);
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(token_ids(c).size(), 4u);
  EXPECT_EQ(c["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);

  json sreq = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
               {"max_tokens", 4},
               {"ignore_eos", true},
               {"stream", true}};
  r = s.post("/v1/chat/completions", sreq);
  const auto ev = events(r->body);
  ASSERT_EQ(ev.size(), 7u);  // role, 4 tokens, finish, [DONE]
  EXPECT_EQ(json::parse(ev[0])["choices"][0]["delta"],
            json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(json::parse(ev[0])["object"], "chat.completion.chunk");
  EXPECT_EQ(json::parse(ev[5])["choices"][0]["finish_reason"], "length");
  std::string
      streamed;  // the deltas spell the whole answer (the finish may flush a held-back byte)
  for (size_t i = 1; i <= 5; ++i)
    streamed += json::parse(ev[i])["choices"][0]["delta"].value("content", "");
  EXPECT_EQ(streamed, c["choices"][0]["message"]["content"].get<std::string>());

  r = s.client->Get("/v1/models");
  ASSERT_EQ(r->status, 200);
  const json models = json::parse(r->body);
  ASSERT_EQ(models["data"].size(), 2u);
  EXPECT_EQ(models["data"][0]["id"], "tiny");
  EXPECT_EQ(models["data"][1]["id"], "default");
  r = s.client->Get("/health");
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"generation":1,"status":"ok"})");

  const std::string m = s.metrics();
  const std::string l = "{model_name=\"tiny\",variant=\"default\"";
  EXPECT_EQ(metric(m, "switchyard:request_success_total" + l + ",finished_reason=\"length\"}"), 2);
  EXPECT_EQ(metric(m, "switchyard:generation_tokens_total" + l + "}"), 8);
  EXPECT_EQ(metric(m, "switchyard:time_to_first_token_seconds_count" + l + "}"), 2);
  EXPECT_EQ(metric(m, "switchyard:inter_token_latency_seconds_count" + l + "}"), 6);
  EXPECT_EQ(metric(m, "switchyard:e2e_request_latency_seconds_bucket" + l + ",le=\"+Inf\"}"), 2);
  EXPECT_EQ(metric(m, "switchyard:num_requests_running" + l + "}"), 0);
  EXPECT_EQ(metric(m, "switchyard:kv_cache_usage_perc" + l + "}"), 0);
  EXPECT_EQ(metric(m, "switchyard:requests_routed_total" + l + ",path=\"full\"}"), 2);
  EXPECT_GE(metric(m, "switchyard:batch_size_count" + l + "}"), 1);
  EXPECT_NE(m.find("# TYPE switchyard:request_success_total counter\n"), std::string::npos);
  EXPECT_NE(m.find("# TYPE switchyard:time_to_first_token_seconds histogram\n"), std::string::npos);
  EXPECT_EQ(metric(m,
                   "switchyard:variant_info{model_name=\"tiny\",variant=\"default\",scheduler="
                   "\"fixed_window\",backend=\"cpu_ref\",state=\"active\"}"),
            1);
}

TEST(ServerHttp, BadInputGetsExactErrorsAndTheServerKeepsServing) {
  TestServer s("http-bad", single("dynamic", ""));
  struct Case {
    std::string path, body;
    int status;
    std::string error;
  };
  const std::string p600(600, 'a');
  const std::vector<Case> cases = {
      {"/v1/completions", R"({"prompt": "x", "max_tokens": 4,)", 400,
       R"({"error":{"code":"invalid_json","message":"We could not parse the JSON body of your request: [json.exception.parse_error.101] parse error at line 1, column 33: syntax error while parsing object key - unexpected end of input; expected string literal","param":null,"type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": "4"})", 400,
       R"({"error":{"code":"invalid_type","message":"Invalid type for 'max_tokens': expected an integer, but got a string instead.","param":"max_tokens","type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": 7})", 400,
       R"({"error":{"code":"invalid_type","message":"Invalid type for 'prompt': expected a string or an array, but got an integer instead.","param":"prompt","type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": "x", "best": 1})", 400,
       R"({"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: best","param":"best","type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": 0})", 400,
       R"({"error":{"code":"invalid_value","message":"Invalid 'max_tokens': 0 is only allowed with 'echo' (the prompt scored, nothing generated).","param":"max_tokens","type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": "x", "max_tokens": 600})", 400,
       R"({"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 512 tokens. However, you requested 605 tokens (5 in the prompt, 600 for the completion). Please reduce the length of the prompt or completion.","param":"prompt","type":"invalid_request_error"}})"},
      {"/v1/completions", "{\"prompt\": \"" + p600 + "\", \"max_tokens\": 1}", 400,
       R"({"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 512 tokens. However, you requested 605 tokens (604 in the prompt, 1 for the completion). Please reduce the length of the prompt or completion.","param":"prompt","type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": [1, 2, 999]})", 400,
       R"({"error":{"code":"invalid_prompt","message":"Invalid 'prompt': prompt token id 999 outside the vocab.","param":"prompt","type":"invalid_request_error"}})"},
      {"/v1/completions", R"({"prompt": "x", "model": "gpt-4"})", 404,
       R"({"error":{"code":"model_not_found","message":"The model 'gpt-4' does not exist","param":"model","type":"invalid_request_error"}})"},
      {"/v1/chat/completions", R"({"messages": [{"role": "user"}]})", 400,
       R"({"error":{"code":"invalid_value","message":"Invalid 'messages[0].content': required property is missing.","param":"messages[0].content","type":"invalid_request_error"}})"},
  };
  for (const auto& c : cases) {
    auto r = s.post_raw(c.path, c.body);
    ASSERT_TRUE(r) << c.body;
    EXPECT_EQ(r->status, c.status) << c.body;
    EXPECT_EQ(r->body, c.error) << c.body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  }
  auto r = s.client->Get("/v1/completions");
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"method_not_allowed","message":"Method GET is not allowed on /v1/completions.","param":null,"type":"invalid_request_error"}})");
  r = s.client->Get("/v2/things");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"not_found","message":"Unknown path: GET /v2/things.","param":null,"type":"invalid_request_error"}})");
  // Still serving, and nothing was left queued or holding blocks.
  r = s.post("/v1/completions", greedy("ok", 3));
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(token_ids(json::parse(r->body)).size(), 3u);
  const std::string m = s.metrics();
  EXPECT_EQ(metric(m,
                   "switchyard:request_rejected_total{model_name=\"tiny\",variant=\"default\","
                   "reason=\"context_length\"}"),
            2);
  EXPECT_EQ(metric(m,
                   "switchyard:request_rejected_total{model_name=\"tiny\",variant=\"default\","
                   "reason=\"invalid\"}"),
            1);
  EXPECT_EQ(metric(m, "switchyard:queue_depth{model_name=\"tiny\",variant=\"default\"}"), 0);
  EXPECT_EQ(metric(m, "switchyard:kv_cache_usage_perc{model_name=\"tiny\",variant=\"default\"}"),
            0);
}

// fixed_window holds requests for its 1.5 s window unless 8 are queued: with max_queue 2 the
// third is refused (429), and the two queued ones pass their 0.5 s timeout (504).
TEST(ServerHttp, FullQueueIs429AndTimeoutIs504) {
  TestServer s("http-queue", single("fixed_window", "max_batch = 8\nwait_window_ms = 1500\n",
                                    "max_queue = 2\nrequest_timeout_s = 0.5\n"));
  std::vector<std::pair<int, std::string>> slow(2);
  std::vector<std::thread> t;
  for (int i = 0; i < 2; ++i)
    t.emplace_back([&, i] {
      auto r = s.make_client()->Post("/v1/completions", greedy("q", 2).dump(), "application/json");
      if (r) slow[i] = {r->status, r->body};
    });
  ASSERT_TRUE(eventually([&] {
    return metric(s.metrics(), "switchyard:queue_depth{model_name=\"tiny\",variant=\"default\"}") ==
           2;
  }));
  auto r = s.post("/v1/completions", greedy("q", 2));
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"queue_full","message":"The server is overloaded: the queue of variant 'default' is full (2 requests waiting). Retry later.","param":null,"type":"rate_limit_error"}})");
  for (auto& x : t) x.join();
  for (auto& [status, body] : slow) {
    EXPECT_EQ(status, 504);
    EXPECT_EQ(
        body,
        R"({"error":{"code":"request_timeout","message":"The request did not finish within the server's request timeout of 0.5 s.","param":null,"type":"timeout_error"}})");
  }
  const std::string m = s.metrics();
  EXPECT_EQ(metric(m, "switchyard:request_timeouts_total{model_name=\"tiny\",variant=\"default\"}"),
            2);
  EXPECT_EQ(metric(m,
                   "switchyard:request_rejected_total{model_name=\"tiny\",variant=\"default\","
                   "reason=\"queue_full\"}"),
            1);
  EXPECT_EQ(metric(m,
                   "switchyard:request_success_total{model_name=\"tiny\",variant=\"default\","
                   "finished_reason=\"abort\"}"),
            2);
  EXPECT_EQ(metric(m, "switchyard:queue_depth{model_name=\"tiny\",variant=\"default\"}"), 0);
}

TEST(ServerHttp, DisconnectCancelsAStreamingRequestAndFreesItsBlocks) {
  // 1800 tokens on it outlast the test.
  const auto model = stepping_model();
  TestServer s("http-disconnect", single("fixed_window", "wait_window_ms = 0\n", "", model));
  {
    RawClient c(s.server->port());
    json req = greedy("go", 1800);
    req["stream"] = true;
    c.send_post("/v1/completions", req.dump());
    ASSERT_TRUE(c.read_until("token_ids"));
    // Gauges are published after each engine step, so they may trail the first token by one step.
    EXPECT_TRUE(eventually(
        [&] {
          const std::string m = s.metrics();
          return metric(
                     m,
                     "switchyard:num_requests_running{model_name=\"tiny\",variant=\"default\"}") ==
                     1 &&
                 metric(m,
                        "switchyard:kv_cache_usage_perc{model_name=\"tiny\",variant=\"default\"}") >
                     0;
        },
        2000));
  }  // closed mid-stream
  const std::string abort =
      "switchyard:request_success_total{model_name=\"tiny\",variant=\"default\",finished_reason="
      "\"abort\"}";
  ASSERT_TRUE(eventually([&] { return metric(s.metrics(), abort) == 1; }, 5000));
  const std::string m = s.metrics();
  EXPECT_EQ(metric(m, "switchyard:num_requests_running{model_name=\"tiny\",variant=\"default\"}"),
            0);
  EXPECT_EQ(metric(m, "switchyard:kv_cache_usage_perc{model_name=\"tiny\",variant=\"default\"}"),
            0);
  EXPECT_LT(
      metric(m, "switchyard:generation_tokens_total{model_name=\"tiny\",variant=\"default\"}"),
      1800);
}

TEST(ServerHttp, DisconnectCancelsAWaitingNonStreamingRequest) {
  TestServer s("http-disconnect-wait",
               single("fixed_window", "max_batch = 8\nwait_window_ms = 1500\n"));
  const std::string depth = "switchyard:queue_depth{model_name=\"tiny\",variant=\"default\"}";
  {
    RawClient c(s.server->port());
    c.send_post("/v1/completions", greedy("wait", 4).dump());
    ASSERT_TRUE(eventually([&] { return metric(s.metrics(), depth) == 1; }));
  }
  const std::string abort =
      "switchyard:request_success_total{model_name=\"tiny\",variant=\"default\",finished_reason="
      "\"abort\"}";
  ASSERT_TRUE(eventually([&] { return metric(s.metrics(), abort) == 1; },
                         1000));  // well before the 1.5 s window
  EXPECT_EQ(metric(s.metrics(), depth), 0);
  EXPECT_EQ(metric(s.metrics(),
                   "switchyard:request_timeouts_total{model_name=\"tiny\",variant=\"default\"}"),
            -1);
}

}  // namespace
