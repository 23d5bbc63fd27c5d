// The HTTP driver against a fake streaming server on a local socket: URL parsing, the request
// body, SSE chunks split across reads, tokens per chunk, and the errors a client sees.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "bench/http_client.h"
#include "bench/http_driver.h"
#include "switchyard/common/error.h"

using namespace sy::bench;

namespace {

// Serves `n` connections, one request each, replying with `reply(i)` split in pieces that are
// sent one at a time (so the client sees events cut across reads).
class FakeServer {
 public:
  FakeServer(size_t n, std::function<std::vector<std::string>(size_t)> reply) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, n, reply] {
      for (size_t i = 0; i < n; ++i) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        std::string req;
        char buf[4096];
        // Headers, then Content-Length bytes of body.
        while (req.find("\r\n\r\n") == std::string::npos)
          req.append(buf, std::max<ssize_t>(0, recv(c, buf, sizeof buf, 0)));
        const size_t cl = std::stoul(req.substr(req.find("Content-Length: ") + 16));
        const size_t body_at = req.find("\r\n\r\n") + 4;
        while (req.size() < body_at + cl)
          req.append(buf, std::max<ssize_t>(0, recv(c, buf, sizeof buf, 0)));
        {
          std::lock_guard<std::mutex> lock(mu_);
          requests_.push_back(req);
        }
        for (const std::string& piece : reply(i)) {
          send(c, piece.data(), piece.size(), MSG_NOSIGNAL);
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        close(c);
      }
    });
  }
  ~FakeServer() {
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/v1/completions";
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

std::string chunk(const std::string& data) {
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

// One token, then two in one chunk (an event cut across two HTTP chunks), then [DONE].
std::vector<std::string> stream_reply(size_t) {
  const std::string e2 = "data: {\"choices\":[{\"text\":\"bc\",\"token_ids\":[6, 7]}]}\n\n";
  return {
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
      chunk("data: {\"choices\":[{\"text\":\"a\",\"token_ids\":[5]}]}\n\n"),
      chunk(e2.substr(0, 20)),
      chunk(e2.substr(20)),
      chunk("data: [DONE]\n\n"),
      "0\r\n\r\n"};
}

std::vector<WorkItem> items(size_t n) {
  std::vector<WorkItem> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i].arrival_ns = int64_t(i) * 5'000'000;
    v[i].prompt = {3, 4, int32_t(10 + i)};
    v[i].max_new_tokens = 3;
    v[i].simple = i % 2 == 0;
  }
  return v;
}

}  // namespace

TEST(BenchHttp, ParsesUrls) {
  Url u = parse_url("http://box:8080/v1/completions");
  EXPECT_EQ(u.host, "box");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.path, "/v1/completions");
  u = parse_url("http://box");
  EXPECT_EQ(u.port, 80);
  EXPECT_EQ(u.path, "/");
  EXPECT_THROW(parse_url("http://:80/"), sy::Error);
  try {
    parse_url("https://box/v1");
    FAIL();
  } catch (const sy::Error& e) {
    EXPECT_STREQ(e.what(), "endpoint 'https://box/v1' must start with http:// (no TLS)");
  }
  try {
    parse_url("http://box:99999/");
    FAIL();
  } catch (const sy::Error& e) {
    EXPECT_STREQ(e.what(), "endpoint 'http://box:99999/' has a bad port '99999'");
  }
}

TEST(BenchHttp, TokensPerChunkAndRequestBody) {
  EXPECT_EQ(chunk_tokens("{\"choices\":[{\"token_ids\":[1, 2,3]}]}"), 3u);
  EXPECT_EQ(chunk_tokens("{\"choices\":[{\"token_ids\":[ ]}]}"), 0u);
  EXPECT_EQ(chunk_tokens("{\"choices\":[{\"text\":\"hi\"}]}"), 1u);
  EXPECT_EQ(chunk_tokens("{\"choices\":[{\"text\": \"\",\"finish_reason\":\"length\"}]}"), 0u);
  WorkItem it;
  it.prompt = {3, 4, 5};
  it.max_new_tokens = 7;
  EXPECT_EQ(completion_body(it, "dense"),
            "{\"model\":\"dense\",\"prompt\":[3,4,5],\"max_tokens\":7,\"temperature\":0,"
            "\"ignore_eos\":true,\"stream\":true}");
  EXPECT_EQ(completion_body("hi \"you\"", 2, false),
            "{\"prompt\":\"hi \\\"you\\\"\",\"max_tokens\":2,\"temperature\":0,\"ignore_eos\":true,"
            "\"stream\":false}");
}

TEST(BenchHttp, ReplayRecordsStreamedTokens) {
  FakeServer server(3, stream_reply);
  const auto work = items(3);
  const RunLog log = replay_http(server.url(), "", work, DriverOptions{});
  ASSERT_EQ(log.requests.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const RequestRecord& r = log.requests[i];
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.simple, work[i].simple);
    EXPECT_EQ(r.prompt_len, 3u);
    EXPECT_EQ(r.arrival_ns, log.start_ns + work[i].arrival_ns);
    ASSERT_EQ(r.token_ns.size(), 3u);
    EXPECT_LE(r.arrival_ns, r.token_ns[0]);
    EXPECT_LE(r.token_ns[0], r.token_ns[1]);
    EXPECT_EQ(r.token_ns[1], r.token_ns[2]);  // the same chunk
  }
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  for (const auto& q : reqs) {
    EXPECT_EQ(q.rfind("POST /v1/completions HTTP/1.1\r\n", 0), 0u);
    EXPECT_NE(q.find("\"max_tokens\":3"), std::string::npos);
  }
}

TEST(BenchHttp, ErrorsAreRecordedPerRequest) {
  FakeServer server(2, [](size_t i) -> std::vector<std::string> {
    if (i == 0)
      return {
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 13\r\nConnection: "
          "close\r\n\r\nqueue is full"};
    return {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
            "data: {\"error\": {\"message\": \"boom\"}}\n\n"};
  });
  auto work = items(2);
  work[1].arrival_ns = 50'000'000;  // after the first has been answered
  const RunLog log = replay_http(server.url(), "", work, DriverOptions{});
  EXPECT_FALSE(log.requests[0].ok);
  EXPECT_EQ(log.requests[0].error, "HTTP 503: queue is full");
  EXPECT_FALSE(log.requests[1].ok);
  EXPECT_EQ(log.requests[1].error, "server error: {\"error\": {\"message\": \"boom\"}}");
}

TEST(BenchHttp, ConnectionRefused) {
  int port = 0;
  {  // a port that was free a moment ago
    FakeServer s(0, stream_reply);
    port = parse_url(s.url()).port;
  }
  const RunLog log = replay_http("http://127.0.0.1:" + std::to_string(port) + "/v1/completions", "",
                                 items(1), DriverOptions{});
  EXPECT_FALSE(log.requests[0].ok);
  EXPECT_EQ(log.requests[0].error.rfind("cannot connect to 127.0.0.1:" + std::to_string(port), 0),
            0u)
      << log.requests[0].error;
}
