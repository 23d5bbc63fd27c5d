// The server's refusals, each with its exact status and OpenAI-shaped body, against any
// framing: API, admin and metrics keys; admin only from loopback without a key and only with
// application/json; body size (Content-Length and chunked), header size and count, JSON depth
// and element count, the request memory budget, the connection cap (503 + Retry-After),
// header, read and idle deadlines, the max_tokens cap, prompts too long to tokenize; and no
// input at all reaching a 500. The server keeps serving after each.
#include <ifaddrs.h>
#include <netdb.h>

#include <random>

#include "log_capture.h"
#include "raw_http.h"
#include "server_fixture.h"

namespace {

using namespace sy::test;

std::string config(const std::string& serve = "") {
  return plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" + serve +
         variant_tables("", "dynamic", "");
}

std::string err(const std::string& code, const std::string& message,
                const std::string& type = "invalid_request_error") {
  return R"({"error":{"code":")" + code + R"(","message":")" + message +
         R"(","param":null,"type":")" + type + R"("}})";
}

std::string ok_request() {
  return greedy("ok", 2).dump();
}

TEST(ServerAccess, ApiAdminAndMetricsKeysGuardTheirAreas) {
  sy::test::LogCapture log;
  TestServer s("keys", config(), 0, false, {{"k-one", "k-two"}, {"adm-secret"}, {"met"}});
  auto with = [](const std::string& key) {
    return httplib::Headers{{"Authorization", "Bearer " + key}};
  };
  auto r = s.post("/v1/completions", greedy("x", 2));
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(r->body, err("invalid_api_key",
                         "You didn't provide an API key. Send it in an Authorization header as "
                         "'Bearer <key>'."));
  r = s.post("/v1/completions", greedy("x", 2), with("k-on"));
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->body, err("invalid_api_key", "Incorrect API key provided."));
  r = s.post("/v1/completions", greedy("x", 2), {{"Authorization", "Basic k-one"}});
  EXPECT_EQ(r->status, 401);
  for (const char* k : {"k-one", "k-two"}) {  // comma-separated keys all work
    r = s.post("/v1/completions", greedy("x", 2), with(k));
    EXPECT_EQ(r->status, 200) << r->body;
  }
  EXPECT_EQ(s.client->Get("/v1/models", with("k-two"))->status, 200);
  EXPECT_EQ(s.client->Get("/v1/models")->status, 401);
  // /tokenize and /detokenize use the model's vocabulary: they are API endpoints too.
  for (const auto& [path, body] : {std::pair<std::string, json>{"/tokenize", {{"content", "hi"}}},
                                   {"/detokenize", {{"tokens", {100, 101}}}}}) {
    r = s.post(path, body);
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_EQ(r->body, err("invalid_api_key",
                           "You didn't provide an API key. Send it in an Authorization header as "
                           "'Bearer <key>'."))
        << path;
    r = s.post(path, body, with("wrong"));
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_EQ(r->body, err("invalid_api_key", "Incorrect API key provided.")) << path;
    r = s.post(path, body, with("k-one"));
    EXPECT_EQ(r->status, 200) << path << " " << r->body;
  }
  EXPECT_EQ(s.client->Get("/health")->status, 200);  // always open

  // The API key is not an admin key.
  r = s.client->Get("/admin/status", with("k-one"));
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->body, err("invalid_admin_key",
                         "The admin API needs the admin key (--admin-key or "
                         "SWITCHYARD_ADMIN_KEY) as 'Authorization: Bearer <key>'."));
  EXPECT_EQ(s.client->Get("/admin/status", with("adm-secret"))->status, 200);
  r = s.client->Post("/admin/rollback", with("adm-secret"), "{}", "application/json");
  EXPECT_EQ(r->status, 200) << r->body;

  r = s.client->Get("/metrics");
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->body, err("invalid_api_key",
                         "This endpoint needs the metrics key as 'Authorization: Bearer <key>'."));
  EXPECT_EQ(s.client->Get("/metrics", with("met"))->status, 200);
  // No key appears in what the server logged.
  for (const char* k : {"k-one", "k-two", "adm-secret", "k-on", "wrong"})
    EXPECT_EQ(log.text().find(k), std::string::npos) << k;
}

TEST(ServerAccess, KeyHelpers) {
  using namespace sy::server;
  EXPECT_EQ(split_keys(" a, b ,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(bearer_token("Bearer  tok "), "tok");
  EXPECT_EQ(bearer_token("bearer tok"), "tok");
  EXPECT_EQ(bearer_token("Basic tok"), "");
  EXPECT_TRUE(key_matches({"abc", "xyz"}, "xyz"));
  EXPECT_FALSE(key_matches({"abc"}, "ab"));
  EXPECT_FALSE(key_matches({"abc"}, "abcd"));
  EXPECT_FALSE(key_matches({"abc"}, ""));
  EXPECT_FALSE(key_matches({""}, ""));
  for (const char* a : {"127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"})
    EXPECT_TRUE(is_loopback(a)) << a;
  for (const char* a : {"10.0.0.1", "::ffff:10.0.0.1", "fe80::1", "128.0.0.1"})
    EXPECT_FALSE(is_loopback(a)) << a;
  EXPECT_EQ(area_of("/health"), Area::open);
  EXPECT_EQ(area_of("/metrics"), Area::metrics);
  EXPECT_EQ(area_of("/admin/reload"), Area::admin);
  EXPECT_EQ(area_of("/v1/completions"), Area::api);
  EXPECT_EQ(area_of("/tokenize"), Area::api);
}

// This machine's first IPv4 address that is not loopback, if it has one.
std::string non_loopback_ipv4() {
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) != 0) return "";
  std::string out;
  for (ifaddrs* i = ifs; i && out.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    if (!sy::server::is_loopback(buf)) out = buf;
  }
  freeifaddrs(ifs);
  return out;
}

TEST(ServerAccess, WithoutAnAdminKeyAdminAnswersOnlyLoopback) {
  const std::string addr = non_loopback_ipv4();
  if (addr.empty()) GTEST_SKIP() << "no non-loopback IPv4 address on this machine";
  sy::test::LogCapture log;
  TestServer s("admin-loopback", config(), 0, false, {}, "0.0.0.0");
  // Listening beyond loopback without an API key is worth a warning.
  EXPECT_NE(log.text().find("serving on 0.0.0.0 with no API key: anyone who can reach this "
                            "address can use the model (set --api-key or SWITCHYARD_API_KEY)"),
            std::string::npos)
      << log.text();
  EXPECT_EQ(s.client->Get("/admin/status")->status, 200);  // from 127.0.0.1
  RawClient c(s.server->port(), addr.c_str());
  ASSERT_TRUE(c.send_raw("GET /admin/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string resp = c.read_all();
  EXPECT_EQ(status_of(resp), 403);
  EXPECT_EQ(body_of_response(resp),
            err("admin_loopback_only",
                "The admin API answers only loopback clients when no admin key is set "
                "(--admin-key or SWITCHYARD_ADMIN_KEY).",
                "permission_error"));
  RawClient api(s.server->port(), addr.c_str());  // the API itself stays open without keys
  api.send_post("/v1/completions", ok_request(), "Connection: close\r\n");
  EXPECT_EQ(status_of(api.read_all()), 200);
}

TEST(ServerAccess, AdminTakesOnlyJsonSoBrowsersCannotPostForms) {
  TestServer s("admin-json", config());
  const std::string refusal = err("unsupported_media_type",
                                  "The admin API accepts only 'Content-Type: application/json' "
                                  "(curl: -H 'Content-Type: application/json' -d '{}').");
  // What `curl -X POST .../admin/reload` sends: no body, no type.
  RawClient bare(s.server->port());
  ASSERT_TRUE(bare.send_raw("POST /admin/reload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string resp = bare.read_all();
  EXPECT_EQ(status_of(resp), 415);
  EXPECT_EQ(body_of_response(resp), refusal);
  for (const char* type :
       {"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"}) {
    auto r = s.client->Post("/admin/rollback", "a=1", type);
    EXPECT_EQ(r->status, 415) << type;
    EXPECT_EQ(r->body, refusal);
  }
  EXPECT_EQ(json::parse(s.client->Get("/admin/status")->body)["rolled_back"], false);
  auto r = s.client->Post("/admin/reload", "", "application/json; charset=utf-8");
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["changed"], false);
  r = s.client->Post("/admin/reload", R"({"force": true})", "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: force","param":"force","type":"invalid_request_error"}})");
}

TEST(ServerLimits, BodyLimitHoldsForContentLengthAndChunked) {
  TestServer s("body", config("max_body_bytes = 4096\n"));
  const std::string too_large =
      err("payload_too_large", "The request body is larger than 4096 bytes.");
  {  // refused from its header, before a byte of the body is read
    RawClient c(s.server->port());
    ASSERT_TRUE(
        c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                   "application/json\r\nContent-Length: 5000000\r\n\r\n"));
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 413);
    EXPECT_EQ(body_of_response(resp), too_large);
    EXPECT_EQ(header_of(resp, "Connection"), "close");
  }
  {  // chunked: refused as soon as the decoded body passes the limit, mid-stream
    RawClient c(s.server->port());
    ASSERT_TRUE(
        c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                   "application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
    const std::string chunk = "400\r\n" + std::string(1024, ' ') + "\r\n";
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(c.send_raw(chunk));
    ASSERT_TRUE(c.send_raw("1\r\n \r\n"));  // 4097 bytes
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 413);
    EXPECT_EQ(body_of_response(resp), too_large);
  }
  {  // a chunked body within the limit is a normal request
    RawClient c(s.server->port());
    const std::string body = ok_request();
    std::ostringstream hex;
    hex << std::hex << body.size() - 5;
    ASSERT_TRUE(
        c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                   hex.str() + ";ext=1\r\n" + body.substr(0, body.size() - 5) + "\r\n5\r\n" +
                   body.substr(body.size() - 5) + "\r\n0\r\nX-T: 1\r\n\r\n"));
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 200) << resp;
    EXPECT_EQ(token_ids(json::parse(body_of_response(resp))).size(), 2u);
  }
  struct Case {
    std::string head, status, body;
  };
  const std::vector<Case> framing = {
      {"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "400",
       err("invalid_request", "Content-Length and Transfer-Encoding cannot both be set.")},
      {"Content-Length: 3\r\nContent-Length: 4\r\n", "400",
       err("invalid_request", "Conflicting Content-Length headers.")},
      {"Content-Length: -1\r\n", "400", err("invalid_request", "Invalid Content-Length header.")},
      {"Transfer-Encoding: gzip, chunked\r\n", "501",
       err("not_implemented",
           "Transfer-Encoding 'gzip, chunked' is not supported; send the body plain or chunked.",
           "server_error")},
  };
  for (const auto& c : framing) {
    RawClient raw(s.server->port());
    ASSERT_TRUE(raw.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + c.head + "\r\n"));
    const std::string resp = raw.read_all();
    EXPECT_EQ(std::to_string(status_of(resp)), c.status) << c.head;
    EXPECT_EQ(body_of_response(resp), c.body) << c.head;
  }
  EXPECT_EQ(s.post_raw("/v1/completions", ok_request())->status, 200);
}

TEST(ServerLimits, HeaderSizeAndCount) {
  TestServer s("headers", config("max_header_bytes = 1024\nmax_headers = 20\n"));
  {
    RawClient c(s.server->port());
    ASSERT_TRUE(c.send_raw("GET /health HTTP/1.1\r\nX-Big: " + std::string(2000, 'a') + "\r\n"));
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 431);
    EXPECT_EQ(body_of_response(resp),
              err("headers_too_large", "The request head is larger than 1024 bytes."));
  }
  {
    RawClient c(s.server->port());
    std::string head = "GET /health HTTP/1.1\r\n";
    for (int i = 0; i < 21; ++i) head += "X-" + std::to_string(i) + ": 1\r\n";
    ASSERT_TRUE(c.send_raw(head + "\r\n"));
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 431);
    EXPECT_EQ(body_of_response(resp),
              err("headers_too_large", "The request has more than 20 header fields."));
  }
  {  // a header trickled one byte at a time is still bounded
    RawClient c(s.server->port());
    ASSERT_TRUE(c.send_raw("GET /health HTTP/1.1\r\nX-Slow: "));
    bool refused = false;
    for (int i = 0; i < 1100 && !refused; ++i) refused = !c.send_raw("a");
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 431);
  }
  EXPECT_EQ(s.client->Get("/health")->status, 200);
}

TEST(ServerLimits, JsonDepthElementsAndNumbers) {
  TestServer s("json", config("max_json_depth = 16\nmax_json_elements = 1000\n"));
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  auto r = s.post_raw("/v1/completions", deep);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, err("json_too_deep", "The JSON body nests deeper than 16 levels."));
  std::string many = "{\"prompt\": [";
  for (int i = 0; i < 2000; ++i) many += (i ? ",1" : "1");
  many += "]}";
  r = s.post_raw("/v1/completions", many);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, err("json_too_large", "The JSON body holds more than 1000 values."));
  r = s.post_raw("/v1/completions", R"({"prompt": "x", "temperature": 1e400})");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, err("invalid_json",
                         "We could not parse the JSON body of your request: "
                         "[json.exception.out_of_range.406] number overflow parsing '1e400'"));
  EXPECT_EQ(s.post_raw("/v1/completions", ok_request())->status, 200);
}

TEST(ServerLimits, MaxTokensCapAndPromptsTooLongToTokenize) {
  TestServer s("max-tokens", config("max_tokens_limit = 8\n"));
  auto r = s.post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 9}});
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"invalid_value","message":"Invalid 'max_tokens': integer above maximum value. Expected a value <= 8, but got 9 instead.","param":"max_tokens","type":"invalid_request_error"}})");
  r = s.post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                      {"max_completion_tokens", 50}});
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"invalid_value","message":"Invalid 'max_completion_tokens': integer above maximum value. Expected a value <= 8, but got 50 instead.","param":"max_completion_tokens","type":"invalid_request_error"}})");
  // Without max_tokens the cap applies to the default too.
  r = s.post("/v1/completions", {{"prompt", "x"}, {"ignore_eos", true}});
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(token_ids(json::parse(r->body)).size(), 8u);
  // A text that cannot fit the context is refused without tokenizing it: the byte vocabulary's
  // longest token text is 7 bytes ("<0x00>" and the like are 6; "<unk>"...), so 1 MB of text is
  // at least 1000000 / longest tokens.
  const auto* tok = s.server->router().current()->variants[0].runner->tokenizer();
  size_t longest = 1;
  for (const auto& t : tok->vocab().tokens) longest = std::max(longest, t.size());
  r = s.post("/v1/completions", {{"prompt", std::string(1'000'000, 'a')}, {"max_tokens", 1}});
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 512 tokens. However, your prompt needs at least )" +
          std::to_string(1'000'000 / longest) +
          R"( tokens. Please reduce the length of the prompt or completion.","param":"prompt","type":"invalid_request_error"}})");
}

TEST(ServerLimits, RequestMemoryBudgetRefusesBeforeBuffering) {
  TestServer s("budget", config("request_memory_mb = 1\n"));
  RawClient c(s.server->port());
  // 3 x 400 kB + 64 kB is over the 1 MiB budget: refused from the header.
  ASSERT_TRUE(
      c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 "application/json\r\nContent-Length: 400000\r\n\r\n"));
  const std::string resp = c.read_all();
  EXPECT_EQ(status_of(resp), 503);
  EXPECT_EQ(header_of(resp, "Retry-After"), "1");
  EXPECT_EQ(body_of_response(resp),
            err("server_busy",
                "The server's request memory budget is in use by other requests; retry shortly.",
                "service_unavailable"));
  EXPECT_EQ(s.post_raw("/v1/completions", ok_request())->status, 200);  // small ones still fit
}

TEST(ServerLimits, ConnectionCapAnswers503WithRetryAfter) {
  TestServer s("conn-cap", config("max_connections = 4\n"));
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawClient>(s.server->port()));
    ASSERT_TRUE(held.back()->send_raw("GET /hea"));  // half a request: the connection stays
  }
  RawClient extra(s.server->port());
  const std::string resp = extra.read_all();
  EXPECT_EQ(status_of(resp), 503);
  EXPECT_EQ(header_of(resp, "Retry-After"), "1");
  EXPECT_EQ(
      body_of_response(resp),
      err("too_many_connections", "The server has too many open connections (4); retry shortly.",
          "service_unavailable"));
  held.clear();
  EXPECT_TRUE(eventually([&] {
    auto r = s.make_client()->Get("/health");
    return r && r->status == 200;
  }));
}

TEST(ServerLimits, HeaderReadAndIdleDeadlines) {
  TestServer s("deadlines",
               config("header_timeout_s = 0.3\nread_timeout_s = 0.6\nidle_timeout_s = 0.3\n"));
  {  // a head trickled slower than its deadline
    RawClient c(s.server->port());
    ASSERT_TRUE(c.send_raw("GET /health HTTP/1.1\r\n"));
    for (int i = 0; i < 8 && c.send_raw("X"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string resp = c.read_all(3000);
    EXPECT_EQ(status_of(resp), 408);
    EXPECT_EQ(
        body_of_response(resp),
        err("request_timeout", "The request head was not received within 0.3 s.", "timeout_error"));
  }
  {  // a body that stops coming
    RawClient c(s.server->port());
    ASSERT_TRUE(
        c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: "
                   "100\r\n\r\n{\"prompt\""));
    const std::string resp = c.read_all(3000);
    EXPECT_EQ(status_of(resp), 408);
    EXPECT_EQ(
        body_of_response(resp),
        err("request_timeout", "The request was not received within 0.6 s.", "timeout_error"));
  }
  {  // a connection that never sends anything, or goes quiet after a request, is closed
    RawClient silent(s.server->port());
    EXPECT_TRUE(silent.closed_within(3000));
    RawClient kept(s.server->port());
    ASSERT_TRUE(kept.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string got;
    ASSERT_TRUE(kept.read_until("\"status\":\"ok\"", &got));
    EXPECT_TRUE(kept.closed_within(3000));
  }
  EXPECT_EQ(s.client->Get("/health")->status, 200);
}

TEST(ServerLimits, HealthAnswersWhileManySlowConnectionsAreOpen) {
  TestServer s("slow-many", config("header_timeout_s = 60\n"));
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(std::make_unique<RawClient>(s.server->port()));
    ASSERT_TRUE(slow.back()->send_raw("POST /v1/completions HTTP/1.1\r\nX-Slow: "));
  }
  for (int round = 0; round < 3; ++round) {
    for (auto& c : slow) c->send_raw("a");
    auto r = s.make_client()->Get("/health");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(s.post_raw("/v1/completions", ok_request())->status, 200);
  }
}

TEST(ServerLimits, HttpDetails) {
  TestServer s("http-details", config());
  {  // Expect: 100-continue gets its interim answer, then the real one
    RawClient c(s.server->port());
    const std::string body = ok_request();
    ASSERT_TRUE(c.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                           std::to_string(body.size()) +
                           "\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"));
    std::string got;
    ASSERT_TRUE(c.read_until("100 Continue\r\n\r\n", &got));
    ASSERT_TRUE(c.send_raw(body));
    EXPECT_EQ(status_of(c.read_all()), 200);
  }
  {  // two requests in one write, answered in order on one connection
    RawClient c(s.server->port());
    ASSERT_TRUE(
        c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\n"
                   "Host: x\r\nConnection: close\r\n\r\n"));
    const std::string resp = c.read_all();
    const size_t second = resp.find("HTTP/1.1 200", 1);
    ASSERT_NE(second, std::string::npos) << resp;
    EXPECT_NE(resp.find("\"status\":\"ok\""), std::string::npos);
    EXPECT_NE(resp.find("\"object\":\"list\"", second), std::string::npos);
  }
  {  // HTTP/1.0 closes by default; a stream to it ends with the connection
    RawClient c(s.server->port());
    json req = greedy("s", 3);
    req["stream"] = true;
    const std::string body = req.dump();
    ASSERT_TRUE(c.send_raw("POST /v1/completions HTTP/1.0\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body));
    const std::string resp = c.read_all();
    EXPECT_EQ(status_of(resp), 200);
    EXPECT_EQ(header_of(resp, "Transfer-Encoding"), "");
    EXPECT_NE(resp.find("data: [DONE]"), std::string::npos);
  }
  for (const auto& [line, status] : std::vector<std::pair<std::string, int>>{
           {"GET /health HTTP/2.0", 505},
           {"GET health HTTP/1.1", 400},
           {"GET /health", 400},
           {"GET /" + std::string(9000, 'a') + " HTTP/1.1", 414}}) {
    RawClient c(s.server->port());
    ASSERT_TRUE(c.send_raw(line + "\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(status_of(c.read_all()), status) << line.substr(0, 40);
  }
}

// Random bytes and mutated requests: every answer is a 4xx (or a 200 for one that stayed valid),
// none is a 500, and the server still serves afterwards.
TEST(ServerLimits, NoInputReachesA500) {
  TestServer s("no-500",
               config("max_body_bytes = 65536\nheader_timeout_s = 0.5\nread_timeout_s = 1\n"));
  std::mt19937 rng(15);
  const std::vector<std::string> seeds = {
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nContent-Length: "
      "%LEN%\r\nConnection: close\r\n\r\n" +
          json{{"prompt", "hi"}, {"max_tokens", 2}, {"n", 2}, {"stop", {"a"}}, {"logprobs", 2}}
              .dump(),
      "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: %LEN%\r\nConnection: close\r\n\r\n" +
          json{{"messages", {{{"role", "user"}, {"content", "hi"}}}},
               {"max_tokens", 2},
               {"logit_bias", {{"5", 3}}},
               {"response_format", {{"type", "text"}}}}
              .dump(),
      "POST /admin/reload HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: "
      "%LEN%\r\nConnection: close\r\n\r\n{}",
      "POST /tokenize HTTP/1.1\r\nContent-Length: %LEN%\r\nConnection: close\r\n\r\n" +
          json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"with_pieces", true}}.dump(),
      "POST /detokenize HTTP/1.1\r\nContent-Length: %LEN%\r\nConnection: close\r\n\r\n" +
          json{{"tokens", {3, 70, 200}}}.dump(),
  };
  std::map<int, int> statuses;
  for (int i = 0; i < 240; ++i) {
    std::string req = seeds[i % seeds.size()];
    const size_t head_end = req.find("\r\n\r\n") + 4;
    std::string body = req.substr(head_end);
    for (int m = 0, n = 1 + rng() % 4; m < n; ++m) {
      if (body.empty()) break;
      const size_t at = rng() % body.size();
      switch (rng() % 4) {
        case 0:
          body[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          body.erase(at, 1 + rng() % 4);
          break;
        case 2:
          body.insert(at, std::string(1 + rng() % 3, "{}[]\",:0e-9"[rng() % 11]));
          break;
        default:
          body.insert(at, "1e999");
          break;
      }
    }
    std::string head = req.substr(0, head_end);
    head.replace(head.find("%LEN%"), 5, std::to_string(body.size()));
    RawClient c(s.server->port());
    ASSERT_TRUE(c.send_raw(head + body));
    const int st = status_of(c.read_all(10000));
    ++statuses[st];
    EXPECT_TRUE(st == 200 || (st >= 400 && st < 500)) << st << " for " << body;
  }
  EXPECT_GT(statuses[400], 0);
  EXPECT_EQ(s.post_raw("/v1/completions", ok_request())->status, 200);
}

// A request the server ends without finishing (it is stopping) gets an error, never OpenAI's
// unknown finish_reason "abort".
TEST(ServerLimits, AnAbortedRequestIsA503NotAFinishReason) {
  TestServer s("aborted",
               plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" +
                   variant_tables("", "fixed_window", "max_batch = 8\nwait_window_ms = 5000\n"));
  std::pair<int, std::string> got{-1, ""};
  std::thread t([&] {
    auto r = s.make_client()->Post("/v1/completions", greedy("q", 2).dump(), "application/json");
    if (r) got = {r->status, r->body};
  });
  ASSERT_TRUE(eventually([&] {
    return metric(s.metrics(), "switchyard:queue_depth{model_name=\"tiny\",variant=\"default\"}") ==
           1;
  }));
  s.server->stop();
  t.join();
  EXPECT_EQ(got.first, 503);
  EXPECT_EQ(got.second, err("request_aborted",
                            "The request was aborted before it finished: the server is stopping "
                            "or its variant failed. Retry.",
                            "service_unavailable"));
}

TEST(ServerAccess, RunningAsRootIsWarned) {
  if (geteuid() != 0) GTEST_SKIP() << "not running as root";
  sy::test::LogCapture log;
  TestServer s("root", config());
  EXPECT_NE(log.text().find("running as root: plugins and model files load with root "
                            "privileges; run the server as an unprivileged user"),
            std::string::npos);
}

}  // namespace
