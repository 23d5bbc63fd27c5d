// Hot swap, traffic split, rollback and shadow runs through the HTTP server on 127.0.0.1:
// swapping the scheduler plugin while 32 requests are in flight (every request completes with
// the tokens it gets without a swap), a broken config leaving the old variant serving, reloads
// from the file watcher and SIGHUP, the split by request id, rollback, and the shadow metrics.
#include <csignal>
#include <set>

#include "raw_http.h"
#include "server/router.h"
#include "server/signals.h"
#include "server_fixture.h"

namespace {

using namespace sy::test;

const std::string kFixed = "max_batch = 8\nwait_window_ms = 1\n";

std::string single(const std::string& sched, const std::string& params,
                   const std::string& serve = "") {
  return plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\nmax_queue = 256\n" + serve +
         variant_tables("", sched, params);
}

std::string prompt(int i) {
  return "request " + std::to_string(i) + " takes the " + (i % 2 ? "east" : "west") + " line";
}

json request_for(int i, uint32_t n, bool stream) {
  json r = greedy(prompt(i), n);
  r["stream"] = stream;
  return r;
}

// Tokens of a whole or streamed answer.
std::vector<int32_t> tokens_of(const httplib::Result& r, bool stream) {
  if (!stream) return token_ids(json::parse(r->body));
  std::vector<int32_t> out;
  std::istringstream in(r->body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: {", 0) != 0) continue;
    const json c = json::parse(line.substr(6));
    if (c["choices"].empty()) continue;
    for (int t : c["choices"][0].value("token_ids", json::array())) out.push_back(t);
  }
  return out;
}

double total(const std::string& metrics, const std::string& family) {
  double sum = 0;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(family + "{", 0) == 0 || line.rfind(family + " ", 0) == 0)
      sum += std::stod(line.substr(line.rfind(' ') + 1));
  return sum;
}

TEST(ServerSwap, SchedulerSwapsWith32RequestsInFlightKeepEveryToken) {
  constexpr int kN = 32;
  constexpr uint32_t kTokens = 96;
  TestServer s("swap-32", single("fixed_window", kFixed));
  // The tokens each request gets without a swap.
  std::vector<std::vector<int32_t>> want(kN);
  {
    std::vector<std::thread> t;
    for (int i = 0; i < kN; ++i)
      t.emplace_back([&, i] {
        auto r = s.make_client()->Post("/v1/completions", request_for(i, kTokens, false).dump(),
                                       "application/json");
        ASSERT_TRUE(r) << httplib::to_string(r.error());
        ASSERT_EQ(r->status, 200) << r->body;
        want[i] = token_ids(json::parse(r->body));
      });
    for (auto& x : t) x.join();
  }
  const double routed0 = total(s.metrics(), "switchyard:requests_routed_total");
  ASSERT_EQ(routed0, kN);

  // Each client sends two requests in turn (odd ones streamed) while the scheduler swaps
  // between fixed_window and dynamic, so they land on several generations.
  struct Got {
    int status = 0;
    std::vector<int32_t> tokens;
    std::string generation, finish;
  };
  std::vector<Got> got(2 * kN);
  std::vector<std::thread> clients;
  for (int i = 0; i < kN; ++i)
    clients.emplace_back([&, i] {
      auto c = s.make_client();
      for (int round = 0; round < 2; ++round) {
        const bool stream = i % 2 == 1;
        auto r =
            c->Post("/v1/completions", request_for(i, kTokens, stream).dump(), "application/json");
        Got& g = got[round * kN + i];
        if (!r) return;
        g.status = r->status;
        g.tokens = tokens_of(r, stream);
        g.generation = r->get_header_value("X-Switchyard-Generation");
      }
    });
  ASSERT_TRUE(eventually(
      [&] { return total(s.metrics(), "switchyard:requests_routed_total") >= routed0 + kN; }));
  const double done_before = total(s.metrics(), "switchyard:request_success_total");
  std::vector<double> in_flight;
  for (int k = 0; k < 6; ++k) {
    write_file(s.config, single(k % 2 ? "fixed_window" : "dynamic", k % 2 ? kFixed : ""));
    const std::string m = s.metrics();
    in_flight.push_back(total(m, "switchyard:num_requests_running") +
                        total(m, "switchyard:queue_depth"));
    auto r = s.client->Post("/admin/reload", "", "application/json");
    ASSERT_EQ(r->status, 200) << r->body;
    const json res = json::parse(r->body);
    EXPECT_EQ(res["loaded"], json({"default"}));
    EXPECT_EQ(res["retired"], json({"default"}));
    EXPECT_EQ(res["generation"], k + 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(done_before, kN);  // none of the 32 had finished when the first swap began
  EXPECT_GE(in_flight[0], kN);
  std::set<std::string> generations;
  for (int j = 0; j < 2 * kN; ++j) {
    EXPECT_EQ(got[j].status, 200) << j;
    EXPECT_EQ(got[j].tokens, want[j % kN])
        << "request " << j << " on generation " << got[j].generation;
    generations.insert(got[j].generation);
  }
  EXPECT_GE(generations.size(), 2u);  // served across swaps, not all by one runner
  for (double f : in_flight) EXPECT_GE(f, 8) << "every swap happened with requests in flight";
  ASSERT_TRUE(
      eventually([&] { return s.server->reloader().draining() == 0; }));  // old runners unloaded
  EXPECT_EQ(json::parse(s.client->Get("/admin/status")->body)["variants"][0]["scheduler"],
            "fixed_window");
  const std::string m = s.metrics();
  EXPECT_EQ(metric(m, "switchyard:swaps_total{model_name=\"tiny\"}"), 6);
  EXPECT_EQ(metric(m,
                   "switchyard:request_success_total{model_name=\"tiny\",variant=\"default\","
                   "finished_reason=\"length\"}"),
            3 * kN);
  EXPECT_EQ(metric(m,
                   "switchyard:request_success_total{model_name=\"tiny\",variant=\"default\","
                   "finished_reason=\"abort\"}"),
            -1);
}

TEST(ServerSwap, BrokenConfigOnReloadLeavesTheOldVariantServing) {
  TestServer s("swap-broken", single("fixed_window", kFixed));
  auto r = s.post("/v1/completions", greedy("steady", 8));
  ASSERT_EQ(r->status, 200);
  const auto before = token_ids(json::parse(r->body));
  const std::string path = s.config.string();
  struct Broken {
    std::string text, error_prefix;
  };
  const std::vector<Broken> broken = {
      {"[serve\n",
       path + ":1:7: syntax error: Error while parsing table header: expected ']', saw '\\n'"},
      {single("no_such_scheduler", ""),
       "variant 'default': scheduler plugin 'no_such_scheduler' not found: no "
       "switchyard_scheduler_no_such_scheduler.so in [" +
           std::string(SWITCHYARD_PLUGIN_DIR)},
      {single("fixed_window", "max_batch = 0\n"),
       "variant 'default': scheduler fixed_window: create: fixed_window: bad value '0' for "
       "max_batch"},
      {single("fixed_window", kFixed, "request_timeout_s = \"soon\"\n"),
       path + ":5:21: serve.request_timeout_s: expected a number, got string"},
  };
  for (const auto& b : broken) {
    write_file(s.config, b.text);
    r = s.client->Post("/admin/reload", "", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 422);
    const json body = json::parse(r->body);
    const std::string msg = body["error"]["message"];
    EXPECT_EQ(msg.substr(0, b.error_prefix.size()), b.error_prefix);
    EXPECT_EQ(body["error"]["type"], "reload_error");
    EXPECT_EQ(body["error"]["code"], "reload_failed");
    EXPECT_EQ(body["generation"], 1);
    // The old variant still answers, with the same tokens.
    r = s.post("/v1/completions", greedy("steady", 8));
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(token_ids(json::parse(r->body)), before);
    EXPECT_EQ(r->get_header_value("X-Switchyard-Generation"), "1");
  }
  const std::string m = s.metrics();
  EXPECT_EQ(metric(m, "switchyard:swap_failures_total{model_name=\"tiny\"}"), 4);
  EXPECT_EQ(metric(m, "switchyard:swaps_total{model_name=\"tiny\"}"), -1);
  const json st = json::parse(s.client->Get("/admin/status")->body);
  EXPECT_EQ(st["generation"], 1);
  EXPECT_EQ(st["last_reload"]["ok"], false);
  EXPECT_EQ(st["last_reload"]["trigger"], "admin");
  EXPECT_EQ(st["variants"][0]["scheduler"], "fixed_window");
}

TEST(ServerSwap, FileWatcherReloadsAndSurvivesABrokenEdit) {
  TestServer s("swap-watch", single("fixed_window", kFixed), /*watch_ms=*/50);
  write_file(s.config, single("fixed_window", "max_batch = many\n"));
  ASSERT_TRUE(eventually([&] {
    return metric(s.metrics(), "switchyard:swap_failures_total{model_name=\"tiny\"}") == 1;
  }));
  auto r = s.post("/v1/completions", greedy("still here", 4));
  EXPECT_EQ(r->status, 200);
  write_file(s.config, single("dynamic", ""));
  ASSERT_TRUE(eventually(
      [&] { return json::parse(s.client->Get("/admin/status")->body)["generation"] == 2; }));
  const json st = json::parse(s.client->Get("/admin/status")->body);
  EXPECT_EQ(st["variants"][0]["scheduler"], "dynamic");
  EXPECT_EQ(st["last_reload"]["trigger"], "file");
  r = s.post("/v1/completions", greedy("new scheduler", 4));
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("X-Switchyard-Generation"), "2");
}

TEST(ServerSwap, SighupReloads) {
  sy::server::install_signal_handlers();
  TestServer s("swap-hup", single("fixed_window", kFixed), /*watch_ms=*/0, /*sighup=*/true);
  write_file(s.config, single("dynamic", ""));
  std::raise(SIGHUP);
  ASSERT_TRUE(eventually(
      [&] { return json::parse(s.client->Get("/admin/status")->body)["generation"] == 2; }));
  EXPECT_EQ(json::parse(s.client->Get("/admin/status")->body)["last_reload"]["trigger"], "sighup");
}

std::string split_config(double wa, double wb) {
  return plugin_dirs_line() +
         "[serve]\nmodel_name = \"tiny\"\n[[variants]]\nname = \"a\"\nweight = " +
         std::to_string(wa) + "\n" + variant_tables("variants.", "fixed_window", kFixed) +
         "[[variants]]\nname = \"b\"\nweight = " + std::to_string(wb) + "\n" +
         variant_tables("variants.", "dynamic");
}

TEST(ServerSwap, TrafficSplitsByRequestIdAndRollbackReturnsToBaseline) {
  TestServer s("split", split_config(3, 1));
  sy::server::Deployment expect;
  expect.variants = {{"a", 3, "", nullptr}, {"b", 1, "", nullptr}};
  auto send = [&](const std::string& id) {
    auto r = s.post("/v1/completions", greedy("split", 2), {{"X-Request-Id", id}});
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->get_header_value("X-Request-Id"), id);
    return json::parse(r->body)["variant"].get<std::string>();
  };
  int b = 0;
  for (int i = 0; i < 80; ++i) {
    const std::string id = "split-" + std::to_string(i);
    const std::string v = send(id);
    EXPECT_EQ(v, sy::server::pick_by_weight(expect, id)->name) << id;
    b += v == "b";
  }
  EXPECT_GT(b, 5);  // about 20 of 80
  EXPECT_LT(b, 40);
  EXPECT_EQ(send("split-7"), send("split-7"));

  auto pinned = [&](const std::string& model) {
    auto r = s.post("/v1/completions", {{"prompt", "pin"}, {"max_tokens", 2}, {"model", model}});
    return r->status == 200 ? json::parse(r->body)["variant"].get<std::string>()
                            : std::to_string(r->status);
  };
  EXPECT_EQ(pinned("b"), "b");                // a variant's name pins it
  const std::string served = pinned("tiny");  // the served name splits by weight
  EXPECT_TRUE(served == "a" || served == "b") << served;

  auto r = s.client->Post("/admin/rollback", "", "application/json");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"baseline":"a","generation":1,"ok":true})");
  for (int i = 0; i < 40; ++i) EXPECT_EQ(send("split-" + std::to_string(i)), "a");
  EXPECT_EQ(pinned("b"), "a");     // the rollback covers pinned requests too
  EXPECT_EQ(pinned("zz"), "404");  // an unknown model is still unknown
  EXPECT_EQ(metric(s.metrics(), "switchyard:variant_weight{model_name=\"tiny\",variant=\"b\"}"), 0);
  EXPECT_EQ(json::parse(s.client->Get("/admin/status")->body)["rolled_back"], true);

  // A reload of the unchanged file (or a touch the watcher would see) changes nothing: the
  // rollback holds and no generation is used up.
  r = s.client->Post("/admin/reload", "", "application/json");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(
      r->body,
      R"({"changed":false,"generation":1,"kept":["a","b"],"loaded":[],"ok":true,"retired":[],"trigger":"admin"})");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(send("split-" + std::to_string(i)), "a");
  EXPECT_EQ(json::parse(s.client->Get("/admin/status")->body)["rolled_back"], true);
  EXPECT_EQ(metric(s.metrics(), "switchyard:swaps_total{model_name=\"tiny\"}"), -1);

  // An operator's edit (here only a comment) is a new config: both runners are kept and the
  // split by weight comes back.
  write_file(s.config, split_config(3, 1) + "# edited\n");
  r = s.client->Post("/admin/reload", "", "application/json");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["changed"], true);
  EXPECT_EQ(json::parse(r->body)["generation"], 2);
  EXPECT_EQ(json::parse(r->body)["kept"], json({"a", "b"}));
  EXPECT_EQ(json::parse(r->body)["loaded"], json::array());
  EXPECT_EQ(json::parse(s.client->Get("/admin/status")->body)["rolled_back"], false);
  for (int i = 0; i < 20; ++i) {
    const std::string id = "split-" + std::to_string(i);
    EXPECT_EQ(send(id), sy::server::pick_by_weight(expect, id)->name);
  }
}

std::string shadow_config(const fs::path& shadow_model) {
  return plugin_dirs_line() +
         "[serve]\nmodel_name = \"tiny\"\nshadow = { variant = \"s\", fraction = 1.0 }\n" +
         "[[variants]]\nname = \"p\"\n" + variant_tables("variants.", "fixed_window", kFixed) +
         "[[variants]]\nname = \"s\"\nweight = 0\n" +
         variant_tables("variants.", "dynamic", "", shadow_model);
}

TEST(ServerSwap, ShadowRunsAreComparedAndDiscarded) {
  constexpr int kN = 6, kTok = 8;
  TestServer s("shadow", shadow_config({}));
  for (int i = 0; i < kN; ++i) {
    auto r = s.post("/v1/completions", greedy(prompt(i), kTok));
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["variant"], "p");
  }
  const std::string l = "{model_name=\"tiny\",variant=\"p\",shadow=\"s\"}";
  ASSERT_TRUE(eventually(
      [&] { return metric(s.metrics(), "switchyard:shadow_requests_total" + l) == kN; }));
  std::string m = s.metrics();
  EXPECT_EQ(metric(m, "switchyard:shadow_exact_match_total" + l), kN);
  EXPECT_EQ(metric(m, "switchyard:shadow_tokens_compared_total" + l), kN * kTok);
  EXPECT_EQ(metric(m, "switchyard:shadow_tokens_agreed_total" + l), kN * kTok);
  EXPECT_EQ(metric(m, "switchyard:shadow_latency_difference_seconds_count" + l), kN);
  EXPECT_EQ(metric(m, "switchyard:shadow_first_divergence_position_count" + l), -1);
  EXPECT_EQ(metric(m, "switchyard:generation_tokens_total{model_name=\"tiny\",variant=\"s\"}"),
            kN * kTok);

  // A shadow on a differently seeded model disagrees, and says where.
  const fs::path other = server_dir() / "tiny-seed7.gguf";
  sy::model::ModelShape shape = sy::model::preset_shape("dense-tiny");
  shape.n_embd = 64;
  shape.n_ff = 96;
  if (!fs::exists(other)) sy::model::write_random_llama(shape, "f32", 7, other);
  write_file(s.config, shadow_config(other));
  ASSERT_EQ(s.client->Post("/admin/reload", "", "application/json")->status, 200);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(s.post("/v1/completions", greedy(prompt(i), kTok))->status, 200);
  ASSERT_TRUE(eventually(
      [&] { return metric(s.metrics(), "switchyard:shadow_requests_total" + l) == kN + 4; }));
  m = s.metrics();
  EXPECT_EQ(metric(m, "switchyard:shadow_first_divergence_position_count" + l), 4);
  EXPECT_LT(metric(m, "switchyard:shadow_tokens_agreed_total" + l), (kN + 4) * kTok);
  EXPECT_EQ(metric(m, "switchyard:shadow_exact_match_total" + l), kN);
}

// A shadow copy ends at the same stop strings as its primary, so equal variants still agree
// token for token.
TEST(ServerSwap, ShadowCopiesStopWhereTheirPrimaryStops) {
  TestServer s("shadow-stop", shadow_config({}));
  const std::string l = "{model_name=\"tiny\",variant=\"p\",shadow=\"s\"}";
  auto r = s.post("/v1/completions", greedy(prompt(1), 40));
  const auto ids = token_ids(json::parse(r->body));
  json req = greedy(prompt(1), 40);
  req["stop_token_ids"] = {ids[5]};
  r = s.post("/v1/completions", req);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["choices"][0]["finish_reason"], "stop");
  const size_t n = token_ids(json::parse(r->body)).size();
  EXPECT_LE(n, 6u);
  ASSERT_TRUE(
      eventually([&] { return metric(s.metrics(), "switchyard:shadow_requests_total" + l) == 2; }));
  EXPECT_EQ(metric(s.metrics(), "switchyard:shadow_exact_match_total" + l), 2);
  EXPECT_EQ(metric(s.metrics(), "switchyard:shadow_tokens_compared_total" + l), 40 + n);
}

// The client goes away mid-stream: its shadow copy is cancelled with it and frees its blocks.
TEST(ServerSwap, ShadowIsCancelledWithItsPrimary) {
  const auto model = stepping_model();
  const std::string cfg =
      plugin_dirs_line() +
      "[serve]\nmodel_name = \"tiny\"\nshadow = { variant = \"s\", fraction = 1.0 }\n" +
      "[[variants]]\nname = \"p\"\n" +
      variant_tables("variants.", "fixed_window", "wait_window_ms = 0\n", model) +
      "[[variants]]\nname = \"s\"\nweight = 0\n" +
      variant_tables("variants.", "dynamic", "", model);
  TestServer s("shadow-cancel", cfg);
  const std::string running_s =
      "switchyard:num_requests_running{model_name=\"tiny\",variant=\"s\"}";
  {
    RawClient c(s.server->port());
    json req = greedy("go", 1800);
    req["stream"] = true;
    c.send_post("/v1/completions", req.dump());
    ASSERT_TRUE(c.read_until("token_ids"));
    ASSERT_TRUE(eventually([&] { return metric(s.metrics(), running_s) == 1; }, 5000));
  }  // closed mid-stream
  const std::string abort_s =
      "switchyard:request_success_total{model_name=\"tiny\",variant=\"s\",finished_reason="
      "\"abort\"}";
  ASSERT_TRUE(eventually([&] { return metric(s.metrics(), abort_s) == 1; }, 5000));
  const std::string m = s.metrics();
  EXPECT_EQ(metric(m, running_s), 0);
  EXPECT_EQ(metric(m, "switchyard:kv_cache_usage_perc{model_name=\"tiny\",variant=\"s\"}"), 0);
  EXPECT_LT(metric(m, "switchyard:generation_tokens_total{model_name=\"tiny\",variant=\"s\"}"),
            1800);
  // The pair is judged once both outcomes are in, which may trail the shadow's abort count.
  EXPECT_TRUE(eventually(
      [&] {
        return metric(s.metrics(),
                      "switchyard:shadow_skipped_total{model_name=\"tiny\",shadow=\"s\","
                      "reason=\"primary_aborted\"}") == 1;
      },
      5000));
}

}  // namespace
