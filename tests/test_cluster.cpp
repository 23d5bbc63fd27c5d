// A real cluster on loopback: scripts/cluster.sh brings up two `switchyard serve` replicas
// behind HAProxy with Prometheus scraping them. Bounded traffic goes through the frontend; both
// replicas must serve; promtool must parse every replica's /metrics; a replica killed in the
// middle of the traffic must cost no request that had not started streaming; a rolling reload
// must cost none at all. One process runs every test on one cluster (ctest: cluster_haproxy),
// in the order written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "bench/free_port.h"
#include "bench/http_client.h"
#include "tiny_model.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// stdout of a shell command, and its exit status.
std::pair<int, std::string> sh(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = ::pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::string http_get(const std::string& url) {
  return sh("curl -fsS -m 5 '" + url + "'").second;
}

// What one streamed completion through the frontend did.
struct Outcome {
  bool started = false;  // a token arrived
  bool ok = false;       // 200, tokens, [DONE]
  std::string error;
};

Outcome complete(const sy::bench::Url& url, int i, int max_tokens) {
  Outcome o;
  bool done = false;
  sy::bench::SseParser sse([&](std::string_view d) {
    if (d == "[DONE]")
      done = true;
    else if (sy::bench::chunk_tokens(d) > 0)
      o.started = true;
  });
  const std::string body =
      "{\"prompt\": \"request " + std::to_string(i) +
      " asks for a few tokens\", \"max_tokens\": " + std::to_string(max_tokens) +
      ", \"temperature\": 0, \"ignore_eos\": true, \"stream\": true}";
  try {
    const int status =
        sy::bench::http_post(url, body, 60, [&](std::string_view b) { sse.feed(b); });
    o.ok = status == 200 && done && o.started;
    if (!o.ok) o.error = "HTTP " + std::to_string(status) + (done ? "" : ", no [DONE]");
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  return o;
}

struct Traffic {
  std::vector<Outcome> outcomes;
  size_t failed_unstarted() const {
    size_t n = 0;
    for (const auto& o : outcomes) n += !o.ok && !o.started;
    return n;
  }
  size_t failed_started() const {
    size_t n = 0;
    for (const auto& o : outcomes) n += !o.ok && o.started;
    return n;
  }
  size_t ok() const {
    size_t n = 0;
    for (const auto& o : outcomes) n += o.ok;
    return n;
  }
  std::string errors() const {
    std::string s;
    for (const auto& o : outcomes)
      if (!o.ok) s += (o.started ? "[started] " : "[unstarted] ") + o.error + "\n";
    return s;
  }
};

// `n` requests from `clients` closed-loop clients; `mid` runs once, after `mid_after` are done.
Traffic drive(const sy::bench::Url& url, int n, int clients, int max_tokens, int mid_after = -1,
              const std::function<void()>& mid = {}) {
  Traffic t;
  t.outcomes.resize(n);
  std::atomic<int> next{0}, finished{0};
  std::atomic<bool> mid_done{false};
  std::vector<std::thread> th;
  for (int c = 0; c < clients; ++c)
    th.emplace_back([&] {
      for (int i; (i = next++) < n;) {
        t.outcomes[i] = complete(url, i, max_tokens);
        if (++finished == mid_after && mid) {
          mid();
          mid_done = true;
        }
      }
    });
  for (auto& x : th) x.join();
  EXPECT_TRUE(!mid || mid_done) << "the mid-traffic action never ran";
  return t;
}

// Closed-loop clients that keep sending until `action` (run on this thread) has returned.
Traffic drive_during(const sy::bench::Url& url, int clients, int max_tokens,
                     const std::function<void()>& action) {
  constexpr int kMax = 2000;  // bounded whatever the action does
  Traffic t;
  t.outcomes.resize(kMax);
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> th;
  for (int c = 0; c < clients; ++c)
    th.emplace_back([&] {
      for (int i; !stop && (i = next++) < kMax;) {
        t.outcomes[i] = complete(url, i, max_tokens);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a steady, modest load
      }
    });
  action();
  stop = true;
  for (auto& x : th) x.join();
  t.outcomes.resize(std::min(next.load(), kMax));
  return t;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class Cluster : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(testing::TempDir()) / ("sy-cluster-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const fs::path cfg = dir_ / "replica.toml";
    std::ofstream(cfg) << "plugin_dirs = [\"" << SWITCHYARD_PLUGIN_DIR << "\"]\n"
                       << "[serve]\nmodel_name = \"tiny\"\nrequest_timeout_s = 60\n"
                       << "drain_timeout_s = 30\n"
                       << "[model]\npath = \"" << sy::test::model_file("f32").string() << "\"\n"
                       << "[backend]\nplugin = \"cpu_ref\"\n"
                       << "[scheduler]\nplugin = \"dynamic\"\n"
                       << "[engine]\nprefix_caching = true\nmax_seqs = 8\n";
    port_ = sy::bench::free_loopback_port();
    script_ = std::string(SWITCHYARD_SOURCE_DIR) + "/scripts/cluster.sh";
    common_ = " --dir '" + (dir_ / "run").string() + "'";
    const auto [rc, out] =
        sh(script_ + " up --replicas 2 --config '" + cfg.string() + "' --port " +
           std::to_string(port_) + " --switchyard '" + SWITCHYARD_BIN + "'" + common_);
    up_ok_ = rc == 0;
    up_out_ = out;
  }
  static void TearDownTestSuite() {
    const auto [rc, out] = sh(script_ + " down" + common_);
    EXPECT_EQ(rc, 0) << out;
    if (rc == 0 && !testing::Test::HasFailure()) fs::remove_all(dir_);  // keep logs of a failure
  }
  void SetUp() override { ASSERT_TRUE(up_ok_) << up_out_; }

  static sy::bench::Url frontend() {
    return sy::bench::parse_url("http://127.0.0.1:" + std::to_string(port_) + "/v1/completions");
  }
  struct Replica {
    int index;
    std::string metrics_url;
    std::string served;  // a number, or ? when it does not answer
    std::string state;
  };
  static std::vector<Replica> status() {
    const auto [rc, out] = sh(script_ + " status" + common_);
    EXPECT_EQ(rc, 0) << out;
    std::vector<Replica> r;
    static const std::regex line(
        R"(^replica (\d+) (http://127\.0\.0\.1:\d+/metrics) served (\d+|\?) \((\S+), pid \d+\)$)");
    std::istringstream is(out);
    for (std::string l; std::getline(is, l);) {
      std::smatch m;
      if (std::regex_match(l, m, line)) r.push_back({std::stoi(m[1]), m[2], m[3], m[4]});
    }
    EXPECT_EQ(r.size(), 2u) << out;
    return r;
  }

  static inline fs::path dir_;
  static inline int port_ = 0;
  static inline std::string script_, common_, up_out_;
  static inline bool up_ok_ = false;
};

TEST_F(Cluster, BothReplicasServeTrafficThroughTheFrontend) {
  const Traffic t = drive(frontend(), 24, 6, 8);
  EXPECT_EQ(t.ok(), 24u) << t.errors();
  const auto rs = status();
  for (const auto& r : rs) {
    EXPECT_EQ(r.state, "UP") << "replica " << r.index;
    ASSERT_NE(r.served, "?");
    EXPECT_GT(std::stoi(r.served), 0) << "leastconn sent replica " << r.index << " nothing";
  }
  if (rs.size() == 2 && rs[0].served != "?" && rs[1].served != "?")
    EXPECT_EQ(std::stoi(rs[0].served) + std::stoi(rs[1].served), 24);
}

TEST_F(Cluster, PromtoolParsesEveryReplicasMetrics) {
  for (const auto& r : status()) {
    const std::string text = http_get(r.metrics_url);
    ASSERT_NE(text.find("vllm:num_requests_waiting{model_name=\"tiny\"}"), std::string::npos);
    const fs::path f = dir_ / ("metrics-" + std::to_string(r.index) + ".txt");
    std::ofstream(f) << text;
    // Exit 1: the text does not parse. Exit 3: it parses, with lint findings; the only ones
    // allowed are vLLM's naming, which the Inference Gateway's contract requires (colons in
    // names, vllm:iteration_tokens_total being a histogram), and one older name.
    const auto [rc, out] = sh("promtool check metrics < '" + f.string() + "'");
    EXPECT_TRUE(rc == 0 || rc == 3) << "replica " << r.index << ": " << out;
    std::istringstream is(out);
    for (std::string l; std::getline(is, l);) {
      if (l.empty() || l.ends_with(" metric names should not contain ':'")) continue;
      EXPECT_TRUE(l == "switchyard:iteration_tokens_total non-counter metrics should not have "
                       "\"_total\" suffix" ||
                  l == "switchyard:host_counter_total metric name should not include type "
                       "'counter'")
          << "replica " << r.index << ": promtool: " << l;
    }
  }
}

TEST_F(Cluster, PrometheusScrapesEveryReplica) {
  const std::string state = read_file(dir_ / "run" / "state.env");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(state, m, std::regex("PROM_PORT='(\\d+)'"))) << state;
  const std::string api = "http://127.0.0.1:" + m[1].str() + "/api/v1/";
  // Every replica's target is up, and the gauges an endpoint picker reads are in the TSDB.
  bool all_up = false;
  for (int i = 0; i < 100 && !all_up; ++i) {
    const json t = json::parse(http_get(api + "targets?state=active"), nullptr, false);
    int up = 0;
    if (!t.is_discarded())
      for (const auto& a : t["data"]["activeTargets"])
        up += a["labels"]["job"] == "switchyard" && a["health"] == "up";
    all_up = up == 2;
    if (!all_up) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(all_up);
  const json q =
      json::parse(http_get(api + "query?query=vllm:num_requests_waiting"), nullptr, false);
  ASSERT_FALSE(q.is_discarded());
  EXPECT_EQ(q["data"]["result"].size(), 2u) << q.dump();
}

TEST_F(Cluster, KillingAReplicaMidTrafficLosesNoRequestThatHadNotStartedStreaming) {
  std::string kill_out;
  const Traffic t = drive(frontend(), 48, 8, 24, 12,
                          [&] { kill_out = sh(script_ + " kill-replica 1" + common_).second; });
  EXPECT_NE(kill_out.find("killed replica 1"), std::string::npos) << kill_out;
  EXPECT_EQ(t.failed_unstarted(), 0u) << t.errors();
  // Only requests streaming from the killed replica at that moment may fail: at most the
  // clients in flight.
  EXPECT_LE(t.failed_started(), 8u) << t.errors();
  EXPECT_GE(t.ok(), 40u);
  std::printf("kill mid-traffic: %zu ok, %zu failed after streaming began, %zu failed before\n",
              t.ok(), t.failed_started(), t.failed_unstarted());
  const auto rs = status();
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].state, "down");
  EXPECT_EQ(rs[1].state, "UP");
}

TEST_F(Cluster, RollingReloadSwapsEveryReplicaWithoutDroppingARequest) {
  // Replica 1 is dead from the test before: reload brings it back, then swaps replica 2, all
  // while traffic flows.
  std::string reload_out;
  int reload_rc = -1;
  const Traffic t = drive_during(frontend(), 4, 16, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::tie(reload_rc, reload_out) = sh(script_ + " reload" + common_);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  EXPECT_EQ(reload_rc, 0) << reload_out;
  EXPECT_NE(reload_out.find("reloaded replica 2"), std::string::npos) << reload_out;
  EXPECT_GT(t.outcomes.size(), 8u);
  EXPECT_EQ(t.ok(), t.outcomes.size()) << t.errors();
  std::printf("rolling reload: %zu requests during it, %zu ok\n", t.outcomes.size(), t.ok());
  const auto rs = status();
  for (const auto& r : rs) EXPECT_EQ(r.state, "UP") << "replica " << r.index;
}

}  // namespace
