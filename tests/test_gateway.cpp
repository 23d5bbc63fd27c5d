// The Inference Gateway's contract with a model server: the vllm: gauges an endpoint picker
// scrapes (and the switch that drops them), and /health answering 503 while the server loads
// or drains, so a load balancer's health check takes the replica out of rotation.
#include <gtest/gtest.h>

#include <future>

#include "server_fixture.h"

using sy::test::json;
using sy::test::metric;

namespace {

// fixed_window holds a lone request for its wait window: queued long enough to be seen.
constexpr int kWindowMs = 2500;
std::string held_config(const std::string& serve = "") {
  return sy::test::plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" + serve +
         sy::test::variant_tables(
             "", "fixed_window",
             "max_batch = 8\nwait_window_ms = " + std::to_string(kWindowMs) + "\n",
             sy::test::stepping_model(), "kv_blocks = 40\n");
}

std::string error_code(const httplib::Result& r) {
  return r ? json::parse(r->body)["error"]["code"].get<std::string>() : "no answer";
}

}  // namespace

TEST(GatewayMetrics, VllmGaugesFollowTheQueueAndTheKvCache) {
  sy::test::TestServer s("gateway", held_config());
  const std::string idle = s.metrics();
  EXPECT_EQ(metric(idle, "vllm:num_requests_waiting{model_name=\"tiny\"}"), 0);
  EXPECT_EQ(metric(idle, "vllm:num_requests_running{model_name=\"tiny\"}"), 0);
  EXPECT_EQ(metric(idle, "vllm:kv_cache_usage_perc{model_name=\"tiny\"}"), 0);
  EXPECT_EQ(metric(idle,
                   "vllm:cache_config_info{model_name=\"tiny\",block_size=\"16\","
                   "num_gpu_blocks=\"40\"}"),
            1);
  EXPECT_NE(idle.find("# TYPE vllm:num_requests_waiting gauge"), std::string::npos);

  // Two requests wait out the scheduler's window, then run together.
  auto send = [&] {
    return s.make_client()->Post("/v1/completions", sy::test::greedy("hello", 40).dump(),
                                 "application/json");
  };
  auto a = std::async(std::launch::async, send), b = std::async(std::launch::async, send);
  EXPECT_TRUE(sy::test::eventually(
      [&] { return metric(s.metrics(), "vllm:num_requests_waiting{model_name=\"tiny\"}") == 2; },
      kWindowMs - 100))
      << "both requests queued";
  bool saw_running = false, saw_usage = false;
  EXPECT_TRUE(sy::test::eventually(
      [&] {
        const std::string m = s.metrics();
        const double run = metric(m, "vllm:num_requests_running{model_name=\"tiny\"}");
        if (run > 0) {
          saw_running = true;
          // The same count as the switchyard: gauge of the only variant.
          EXPECT_EQ(
              run,
              metric(m,
                     "switchyard:num_requests_running{model_name=\"tiny\",variant=\"default\"}"));
        }
        const double u = metric(m, "vllm:kv_cache_usage_perc{model_name=\"tiny\"}");
        EXPECT_GE(u, 0);
        EXPECT_LE(u, 1);
        if (u > 0) saw_usage = true;
        return saw_running && saw_usage;
      },
      8000));
  EXPECT_EQ(a.get()->status, 200);
  EXPECT_EQ(b.get()->status, 200);
  const std::string done = s.metrics();
  EXPECT_EQ(metric(done, "vllm:num_requests_running{model_name=\"tiny\"}"), 0);
  EXPECT_EQ(metric(done, "vllm:kv_cache_usage_perc{model_name=\"tiny\"}"), 0) << "blocks freed";
}

TEST(GatewayMetrics, OffSwitchDropsTheFamilies) {
  sy::test::TestServer s("gateway_off", held_config("gateway_metrics = false\n"));
  const std::string m = s.metrics();
  EXPECT_EQ(m.find("vllm:"), std::string::npos);
  EXPECT_NE(m.find("switchyard:num_requests_waiting"), std::string::npos) << "ours stay";
}

TEST(Health, AnswersServiceUnavailableWhileLoading) {
  const auto path = sy::test::server_dir() / "health_loading.toml";
  sy::test::write_file(path, held_config());
  sy::server::ServerOverrides o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.watch_ms = 0;
  o.defer_load = true;
  sy::server::Server srv(path, o);
  srv.listen();
  httplib::Client c("127.0.0.1", srv.port());
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(error_code(h), "loading");
  auto q = c.Post("/v1/completions", sy::test::greedy("hi", 2).dump(), "application/json");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 503) << "no variant to run it yet";
  srv.load();
  h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200) << h->body;
  srv.stop();
}

TEST(Health, DrainFinishesWhatRunsAndRefusesTheRest) {
  sy::test::TestServer s("health_drain", held_config());
  auto running = std::async(std::launch::async, [&] {
    return s.make_client()->Post("/v1/completions", sy::test::greedy("hello", 8).dump(),
                                 "application/json");
  });
  ASSERT_TRUE(sy::test::eventually(
      [&] { return metric(s.metrics(), "vllm:num_requests_waiting{model_name=\"tiny\"}") == 1; },
      kWindowMs - 100));
  s.server->begin_drain();
  auto h = s.client->Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(error_code(h), "draining");
  EXPECT_FALSE(s.server->drained());
  auto refused = s.post("/v1/completions", sy::test::greedy("late", 2));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << "a balancer retries it elsewhere";
  const auto r = running.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "the accepted request runs to the end";
  EXPECT_EQ(json::parse(r->body)["usage"]["completion_tokens"], 8);
  EXPECT_TRUE(sy::test::eventually([&] { return s.server->drained(); }));
}
