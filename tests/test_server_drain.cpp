// A draining server refuses what arrives with 503 `draining` and Retry-After (a balancer retries
// it on another replica), never `swap_in_progress`; what it had accepted runs to the end. Both
// ways in: Server::begin_drain in process, and SIGTERM to `switchyard serve`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <sstream>

#include "bench/free_port.h"
#include "server_fixture.h"

extern char** environ;

using sy::test::json;
using sy::test::metric;

namespace {

const char* const kDrainingBody =
    R"({"error":{"code":"draining","message":"The server is draining: it finishes the )"
    R"(requests it has and takes no new ones; retry on another replica.","param":null,)"
    R"("type":"service_unavailable"}})";

// fixed_window holds a lone request for its whole window: seconds in which it is accepted but
// not finished, far longer than any step of the test takes on a loaded machine.
std::string held_config(int window_ms) {
  return sy::test::plugin_dirs_line() + "[serve]\nmodel_name = \"tiny\"\n" +
         sy::test::variant_tables(
             "", "fixed_window",
             "max_batch = 8\nwait_window_ms = " + std::to_string(window_ms) + "\n");
}

void expect_draining_refusal(const httplib::Result& r, const std::string& what) {
  ASSERT_TRUE(r) << what;
  EXPECT_EQ(r->status, 503) << what;
  EXPECT_EQ(r->get_header_value("Retry-After"), "1") << what;
  EXPECT_EQ(r->body, kDrainingBody) << what;
}

std::string error_code(const httplib::Result& r) {
  return r ? json::parse(r->body)["error"]["code"].get<std::string>() : "no answer";
}

}  // namespace

TEST(ServerDrain, BeginDrainRefusesCompletionsChatAndStreamsWithDraining) {
  sy::test::TestServer s("drain_refusals", held_config(100));
  ASSERT_EQ(s.post("/v1/completions", sy::test::greedy("before", 2))->status, 200);
  s.server->begin_drain();
  expect_draining_refusal(s.post("/v1/completions", sy::test::greedy("late", 2)), "completion");
  json chat = {{"messages", {{{"role", "user"}, {"content", "late"}}}}, {"max_tokens", 2}};
  expect_draining_refusal(s.post("/v1/chat/completions", chat), "chat");
  chat["stream"] = true;
  expect_draining_refusal(s.post("/v1/chat/completions", chat), "stream: refused before any event");
  json pinned = sy::test::greedy("late", 2);
  pinned["model"] = "default";  // a variant's own name routes past the weights, not the drain
  expect_draining_refusal(s.post("/v1/completions", pinned), "pinned to a variant");
  EXPECT_TRUE(s.server->drained());
  // The refusals are counted nowhere as swaps: the status still shows the one generation.
  const auto st = json::parse(s.client->Get("/admin/status")->body);
  EXPECT_EQ(st["generation"], 1);
}

// The serve command as an operator stops it: SIGTERM while a request is held in the window.
TEST(ServerDrain, SigtermDrainsTheServeCommand) {
  const auto dir = sy::test::server_dir();
  const auto config = dir / "drain_sigterm.toml";
  const auto log = dir / "drain_sigterm.log";
  sy::test::write_file(config, held_config(5000));
  const uint16_t port = sy::bench::free_loopback_port();
  std::vector<std::string> args = {SWITCHYARD_BIN,  "serve",  "--config",
                                   config.string(), "--port", std::to_string(port)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, SWITCHYARD_BIN, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  struct Reap {  // a failed assertion still leaves no server behind
    pid_t pid;
    bool done = false;
    ~Reap() {
      if (done) return;
      ::kill(pid, SIGKILL);
      int st;
      ::waitpid(pid, &st, 0);
    }
  } reap{pid};

  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  ASSERT_TRUE(sy::test::eventually(
      [&] {
        const auto h = c.Get("/health");
        return h && h->status == 200;
      },
      60000))
      << "the server did not come up; see " << log;

  auto held = std::async(std::launch::async, [&] {
    httplib::Client hc("127.0.0.1", port);
    hc.set_read_timeout(60, 0);
    return hc.Post("/v1/completions", sy::test::greedy("hello", 8).dump(), "application/json");
  });
  auto metrics = [&] {
    const auto r = c.Get("/metrics");
    return r ? r->body : std::string();
  };
  ASSERT_TRUE(sy::test::eventually(
      [&] { return metric(metrics(), "vllm:num_requests_waiting{model_name=\"tiny\"}") == 1; },
      4000))
      << "the request is held in the window";
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ASSERT_TRUE(sy::test::eventually(
      [&] {
        const auto h = c.Get("/health");
        return h && h->status == 503 && error_code(h) == "draining";
      },
      3000))
      << "/health turns 503 draining so a balancer stops sending";
  expect_draining_refusal(
      c.Post("/v1/completions", sy::test::greedy("late", 2).dump(), "application/json"),
      "after SIGTERM");

  const auto r = held.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "the accepted request runs to the end: " << r->body;
  EXPECT_EQ(json::parse(r->body)["usage"]["completion_tokens"], 8);

  int status = 0;
  ASSERT_TRUE(sy::test::eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 30000))
      << "drained, the server exits";
  reap.done = true;
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  EXPECT_NE(text.str().find("draining (at most"), std::string::npos) << text.str();
}
