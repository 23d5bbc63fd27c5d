// Server pieces without a model: the Prometheus registry, routing by request id, rollback,
// shadow sampling and comparison, and the OpenAI request checks with their exact error bodies.
#include <gtest/gtest.h>

#include <map>

#include "server/api_error.h"
#include "server/metrics_registry.h"
#include "server/openai_request.h"
#include "server/router.h"
#include "server/shadow.h"
#include "switchyard/common/error.h"

namespace {

using namespace sy::server;

TEST(Registry, RendersCountersGaugesAndCumulativeHistograms) {
  Registry r;
  r.define_counter("x:requests", "Requests.");
  r.define_gauge("x:depth", "Depth.");
  r.define_histogram("x:latency_seconds", "Latency.", {0.1, 1});
  r.inc("x:requests", {{"v", "a\"b"}}, 2);
  r.set("x:depth", {}, 3);
  for (double v : {0.05, 0.1, 0.5, 7.0}) r.observe("x:latency_seconds", {{"v", "a"}}, v);
  EXPECT_EQ(r.render(),
            "# HELP x:depth Depth.\n# TYPE x:depth gauge\nx:depth 3\n"
            "# HELP x:latency_seconds Latency.\n# TYPE x:latency_seconds histogram\n"
            "x:latency_seconds_bucket{v=\"a\",le=\"0.1\"} 2\n"
            "x:latency_seconds_bucket{v=\"a\",le=\"1\"} 3\n"
            "x:latency_seconds_bucket{v=\"a\",le=\"+Inf\"} 4\n"
            "x:latency_seconds_sum{v=\"a\"} 7.65\n"
            "x:latency_seconds_count{v=\"a\"} 4\n"
            "# HELP x:requests_total Requests.\n# TYPE x:requests_total counter\n"
            "x:requests_total{v=\"a\\\"b\"} 2\n");
  EXPECT_THROW(r.inc("x:depth", {}), sy::Bug);
  EXPECT_THROW(r.observe("x:nope", {}, 1), sy::Bug);
  r.clear("x:depth");
  EXPECT_EQ(r.value("x:depth", {}), 0);
}

TEST(Registry, BucketHelpersFollowVllm) {
  EXPECT_EQ(buckets_1_2_5(512), (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500}));
  EXPECT_EQ(format_number(0.0005), "0.0005");
  EXPECT_EQ(format_number(2560), "2560");
  EXPECT_EQ(format_number(1e-7), "1e-07");
}

std::shared_ptr<Deployment> deployment(std::vector<std::pair<std::string, double>> vs,
                                       std::string baseline = "") {
  auto d = std::make_shared<Deployment>();
  for (auto& [n, w] : vs) d->variants.push_back({n, w, "", nullptr});
  d->baseline = baseline.empty() ? d->variants[0].name : baseline;
  return d;
}

TEST(Router, SplitsByRequestIdDeterministicallyInProportion) {
  Router r;
  r.install(deployment({{"a", 90}, {"b", 10}}));
  std::map<std::string, int> n;
  for (int i = 0; i < 4000; ++i) {
    const std::string id = "req-" + std::to_string(i);
    const auto first = r.route(id);
    ASSERT_TRUE(first);
    EXPECT_EQ(r.route(id)->primary_name, first->primary_name) << id;
    ++n[first->primary_name];
  }
  EXPECT_NEAR(n["b"] / 4000.0, 0.10, 0.02);
  EXPECT_NEAR(n["a"] / 4000.0, 0.90, 0.02);
}

TEST(Router, ZeroWeightGetsNothingAndPinsAndRollbackOverride) {
  Router r;
  EXPECT_FALSE(r.route("x"));
  auto d = deployment({{"a", 1}, {"b", 0}, {"c", 1}}, "c");
  d->shadow = ShadowSpec{"b", 1.0};
  r.install(d);
  int shadows = 0;
  for (int i = 0; i < 500; ++i) {
    const auto rt = r.route(std::to_string(i));
    EXPECT_NE(rt->primary_name, "b");
    EXPECT_EQ(rt->shadow_name, "b");  // fraction 1: every request is shadowed
    shadows += rt->shadow_name == "b";
  }
  EXPECT_EQ(shadows, 500);
  EXPECT_EQ(r.route("1", "b")->primary_name, "b");
  EXPECT_EQ(r.route("1", "b")->shadow_name, "");  // a pinned request is never shadowed
  EXPECT_FALSE(r.route("1", "zz"));
  r.rollback();
  EXPECT_TRUE(r.rolled_back());
  for (int i = 0; i < 100; ++i) {
    const auto rt = r.route(std::to_string(i), i % 2 ? "a" : "");
    EXPECT_EQ(rt->primary_name, "c");
    EXPECT_EQ(rt->shadow_name, "");
  }
  r.install(deployment({{"a", 1}}));
  EXPECT_FALSE(r.rolled_back());
  EXPECT_EQ(r.route("9")->primary_name, "a");
}

TEST(Router, ShadowFractionSamplesByRequestId) {
  Router r;
  auto d = deployment({{"a", 1}, {"s", 0}});
  d->shadow = ShadowSpec{"s", 0.25};
  r.install(d);
  int n = 0;
  for (int i = 0; i < 4000; ++i) n += r.route("id" + std::to_string(i))->shadow_name == "s";
  EXPECT_NEAR(n / 4000.0, 0.25, 0.03);
}

Outcome out(std::vector<int32_t> t, int64_t e2e_ns) {
  Outcome o;
  o.tokens = std::move(t);
  o.arrival_ns = 1000;
  o.finish_ns = 1000 + e2e_ns;
  o.reason = sy::engine::FinishReason::length;
  return o;
}

TEST(Shadow, ComparesTokensPositionByPosition) {
  auto r = compare_outputs(out({1, 2, 3, 4}, 1'000'000'000), out({1, 2, 9, 4}, 1'500'000'000));
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.compared, 4u);
  EXPECT_EQ(r.agreed, 3u);
  EXPECT_EQ(r.first_divergence, 2);
  EXPECT_DOUBLE_EQ(r.latency_diff_s, 0.5);
  r = compare_outputs(out({1, 2}, 0), out({1, 2, 3}, 0));
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.compared, 3u);
  EXPECT_EQ(r.agreed, 2u);
  EXPECT_EQ(r.first_divergence, 2);
  r = compare_outputs(out({5, 6}, 0), out({5, 6}, 0));
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.first_divergence, -1);
}

TEST(Shadow, PairReportsOnceBothArriveAndSkipsAborted) {
  std::vector<ShadowResult> got;
  std::vector<std::string> skipped;
  ShadowPair p([&](const ShadowResult& r) { got.push_back(r); },
               [&](const std::string& w) { skipped.push_back(w); });
  p.shadow_done(out({1}, 0));
  EXPECT_TRUE(got.empty());
  p.primary_done(out({1}, 0));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].exact);
  ShadowPair q([&](const ShadowResult& r) { got.push_back(r); },
               [&](const std::string& w) { skipped.push_back(w); });
  Outcome a = out({1}, 0);
  a.reason = sy::engine::FinishReason::aborted;
  q.primary_done(a);
  q.shadow_done(out({1}, 0));
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(skipped, std::vector<std::string>{"primary_aborted"});
}

std::string body_of(const std::string& body, bool chat = false) {
  try {
    parse_completion_request(body, chat);
  } catch (const ApiError& e) {
    return std::to_string(e.status) + " " + error_body(e);
  }
  return "accepted";
}

TEST(OpenAiRequest, ReadsTheFieldsItSupports) {
  const auto r = parse_completion_request(
      R"({"model":"m","prompt":"hi","max_tokens":5,"temperature":0.5,"top_p":0.9,"top_k":-1,"seed":3,"stream":true,)"
      R"("stream_options":{"include_usage":true},"ignore_eos":true,"stop":null,"n":1,"user":"u","logprobs":0})",
      false);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(*r.prompt_text, "hi");
  EXPECT_EQ(*r.max_tokens, 5u);
  EXPECT_FLOAT_EQ(*r.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*r.top_p, 0.9f);
  EXPECT_EQ(*r.top_k, 0);
  EXPECT_EQ(*r.seed, 3u);
  EXPECT_TRUE(r.stream && r.include_usage && r.ignore_eos);
  EXPECT_FALSE(r.priority);
  EXPECT_FALSE(r.simple_hint);
  const auto ext = parse_completion_request(
      R"({"prompt":"hi","priority":-3,"simple_hint":true,"min_p":0.05,"typical_p":0.9,"repetition_penalty":1.1})",
      false);
  EXPECT_EQ(*ext.priority, -3);
  EXPECT_TRUE(ext.simple_hint);
  EXPECT_FLOAT_EQ(ext.min_p.value_or(-1), 0.05f);
  EXPECT_FLOAT_EQ(ext.typical_p.value_or(-1), 0.9f);
  EXPECT_FLOAT_EQ(ext.repetition_penalty.value_or(-1), 1.1f);
  EXPECT_FALSE(r.min_p || r.typical_p || r.repetition_penalty);
  EXPECT_EQ(*parse_completion_request(R"({"prompt":[[3,4,5]]})", false).prompt_ids,
            (std::vector<int32_t>{3, 4, 5}));
  const auto c = parse_completion_request(
      R"({"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"max_completion_tokens":2})",
      true);
  ASSERT_EQ(c.messages.size(), 2u);
  EXPECT_EQ(c.messages[1].content, "ab");
  EXPECT_EQ(*c.max_tokens, 2u);
}

TEST(OpenAiRequest, RefusalsHaveOpenAiErrorBodies) {
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "priority": "high"})"),
      R"(400 {"error":{"code":"invalid_type","message":"Invalid type for 'priority': expected an integer, but got a string instead.","param":"priority","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "priority": 2000000000})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'priority': integer above maximum value. Expected a value <= 1073741824, but got 2000000000 instead.","param":"priority","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "simple_hint": 1})"),
      R"(400 {"error":{"code":"invalid_type","message":"Invalid type for 'simple_hint': expected a boolean, but got an integer instead.","param":"simple_hint","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "max_tokens": "5"})"),
      R"(400 {"error":{"code":"invalid_type","message":"Invalid type for 'max_tokens': expected an integer, but got a string instead.","param":"max_tokens","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "max_tokens": 0})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'max_tokens': 0 is only allowed with 'echo' (the prompt scored, nothing generated).","param":"max_tokens","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "max_tokens": 99999999999})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'max_tokens': integer above maximum value. Expected a value <= 16777216, but got 99999999999 instead.","param":"max_tokens","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "temperature": 3})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'temperature': number above maximum value. Expected a value <= 2, but got 3 instead.","param":"temperature","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "repetition_penalty": 0})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'repetition_penalty': must be greater than 0, but got 0 instead.","param":"repetition_penalty","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "typical_p": 0})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'typical_p': must be greater than 0, but got 0 instead.","param":"typical_p","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "min_p": 1.5})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'min_p': number above maximum value. Expected a value <= 1, but got 1.5 instead.","param":"min_p","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "frobnicate": 1})"),
      R"(400 {"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: frobnicate","param":"frobnicate","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"max_tokens": 3})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'prompt': required property is missing.","param":"prompt","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "n": 200})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'n': integer above maximum value. Expected a value <= 128, but got 200 instead.","param":"n","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length 5 instead.","param":"stop","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"([1, 2])"),
      R"(400 {"error":{"code":"invalid_json","message":"The request body must be a JSON object, got an array.","param":null,"type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x",)"),
      R"(400 {"error":{"code":"invalid_json","message":"We could not parse the JSON body of your request: [json.exception.parse_error.101] parse error at line 1, column 16: syntax error while parsing object key - unexpected end of input; expected string literal","param":null,"type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"messages": [{"role": "wizard", "content": "x"}]})", true),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'messages[0].role': 'wizard' is not one of 'system', 'developer', 'user', 'assistant', 'tool'.","param":"messages[0].role","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"messages": "hi"})", true),
      R"(400 {"error":{"code":"invalid_type","message":"Invalid type for 'messages': expected an array, but got a string instead.","param":"messages","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": "x"})", true),
      R"(400 {"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: prompt","param":"prompt","type":"invalid_request_error"}})");
  EXPECT_EQ(
      body_of(R"({"prompt": [1, -2]})"),
      R"(400 {"error":{"code":"invalid_value","message":"Invalid 'prompt': token ids must be non-negative integers.","param":"prompt","type":"invalid_request_error"}})");
}

}  // namespace
