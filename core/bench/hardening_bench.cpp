#include "bench/hardening_bench.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bench/free_port.h"
#include "host/host_api.h"
#include "switchyard/common/error.h"

extern char** environ;

namespace sy::bench {
namespace {

int connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    const ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

bool readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) > 0;
}

// The status of the answer on `fd` (read until the server closes or `ms` pass); 0: none.
int read_status(int fd, int ms) {
  std::string got;
  char buf[16384];
  const int64_t end = now_ns() + int64_t(ms) * 1'000'000;
  while (now_ns() < end) {
    if (!readable(fd, 50)) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (got.size() < 64) got.append(buf, static_cast<size_t>(n));
  }
  if (got.size() < 12 || got.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(got.c_str() + 9);
}

uint64_t rss_kb(pid_t pid, const char* field = "VmRSS:") {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::string(field).size()));
  return 0;
}

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// One bad request of kind `k`: sends it and returns the status the server answered.
int bad_request(uint16_t port, uint32_t k) {
  static const std::string nested = std::string(512 << 10, '[') + std::string(512 << 10, ']');
  static const std::string many = [] {
    std::string s = "{\"prompt\": [";
    for (int i = 0; i < 400000; ++i) s += i ? ",1" : "1";
    return s + "]}";
  }();
  static const std::string long_text = "{\"prompt\": \"" + std::string(1 << 20, 'a') + "\"}";
  const int fd = connect_to(port);
  if (fd < 0) return 0;
  std::string req;
  int wait_ms = 10000;
  switch (k % 16) {
    case 0:
      req = post("/v1/completions", R"({"prompt": "x", "max_tokens": 4,)");
      break;
    case 1:
      req = post("/v1/completions", R"({"prompt": 7})");
      break;
    case 2:
      req = post("/v1/chat/completions", R"({"messages": [], "frobnicate": 1})");
      break;
    case 3:
      req = post("/v1/completions", R"({"prompt": "x", "temperature": 1e400})");
      break;
    case 4:
      req = post("/v1/completions", nested);
      break;
    case 5:
      req = post("/v1/completions", many);
      break;
    case 6:
      req = post("/v1/completions", long_text);
      break;
    case 7:  // a length over the body limit, and no body
      req = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 17825792\r\n\r\n";
      break;
    case 8: {  // chunked past the 16 MiB limit, until the server refuses
      if (k % 32 != 8) {
        req = post("/v1/completions", R"({"prompt": [1, 2, 999999]})");
        break;
      }
      send_all(fd,
               "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
      const std::string chunk = "10000\r\n" + std::string(65536, ' ') + "\r\n";
      for (int i = 0; i < 272 && !readable(fd, 0); ++i)
        if (!send_all(fd, chunk)) break;
      const int st = read_status(fd, wait_ms);
      ::close(fd);
      return st;
    }
    case 9:
      req = "GET /health HTTP/1.1\r\nX-Big: " + std::string(20 << 10, 'h') + "\r\n\r\n";
      break;
    case 10: {
      req = "GET /health HTTP/1.1\r\n";
      for (int i = 0; i < 200; ++i) req += "X-" + std::to_string(i) + ": v\r\n";
      req += "\r\n";
      break;
    }
    case 11:
      req = post("/v1/completions", R"({"prompt": [1, 2, 999999]})");
      break;
    case 12:
      req = "GET /v2/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
      break;
    case 13:
      req = "GET /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
      break;
    case 14:
      req = post("/v1/completions", R"({"prompt": "x", "max_tokens": 0})");
      break;
    default:
      req = std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + "\r\n\r\n";
      break;
  }
  send_all(fd, req);
  const int st = read_status(fd, wait_ms);
  ::close(fd);
  return st;
}

bool health_ok(uint16_t port, int ms, double* latency_ms = nullptr) {
  const int64_t t0 = now_ns();
  const int fd = connect_to(port);
  if (fd < 0) return false;
  send_all(fd, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const int st = read_status(fd, ms);
  ::close(fd);
  if (latency_ms) *latency_ms = st == 200 ? (now_ns() - t0) / 1e6 : -1;
  return st == 200;
}

}  // namespace

HardeningReport run_hardening_bench(const HardeningOptions& o) {
  HardeningReport rep;
  rep.port = free_loopback_port();
  const std::string port = std::to_string(rep.port);
  std::vector<std::string> args = {o.exe, "serve", "--config", o.config, "--port", port};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, o.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, o.exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw sy::Error(SY_ERR_UNAVAILABLE, "cannot start " + o.exe);
  struct Child {
    pid_t pid;
    ~Child() {
      ::kill(pid, SIGTERM);
      int st;
      ::waitpid(pid, &st, 0);
    }
  } child{pid};
  for (int i = 0; !health_ok(rep.port, 1000); ++i) {
    int st;
    if (i > 1200 || ::waitpid(pid, &st, WNOHANG) == pid)
      throw sy::Error(SY_ERR_UNAVAILABLE, "the server did not start; see " + o.log_path);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string good = post("/v1/completions", R"({"prompt": "warm up", "max_tokens": 4})");
  for (int i = 0; i < 20; ++i) {
    const int fd = connect_to(rep.port);
    send_all(fd, good);
    read_status(fd, 30000);
    ::close(fd);
  }

  // Slow connections: each sends a request head one byte per second; one the server drops is
  // opened again, so `slow` stay open throughout the probes.
  std::vector<int> slow(o.slow, -1);
  auto open_slow = [&](int& fd) {
    fd = connect_to(rep.port);
    if (fd >= 0) send_all(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  };
  for (int& fd : slow) open_slow(fd);
  rep.slow_open_min = o.slow;
  int64_t next_byte = now_ns();
  for (uint32_t p = 0; p < o.probes; ++p) {
    if (now_ns() >= next_byte) {
      uint32_t open = 0;
      for (int& fd : slow) {
        char c;
        const bool gone =
            fd < 0 || (readable(fd, 0) && ::recv(fd, &c, 1, MSG_PEEK) >= 0) || !send_all(fd, "a");
        if (gone) {
          if (fd >= 0) ::close(fd);
          open_slow(fd);
          ++rep.slow_reopened;
        }
        open += fd >= 0;
      }
      rep.slow_open_min = std::min(rep.slow_open_min, open);
      next_byte = now_ns() + 1'000'000'000;
    }
    double ms = -1;
    health_ok(rep.port, 5000, &ms);
    rep.health_ms.push_back(ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (int fd : slow)
    if (fd >= 0) ::close(fd);

  // Bad requests from several clients; the child's resident memory is sampled meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  rep.rss_before_kb = rss_kb(pid);
  std::atomic<bool> sampling{true};
  std::atomic<uint64_t> peak{rep.rss_before_kb};
  std::thread sampler([&] {
    while (sampling) {
      peak = std::max<uint64_t>(peak, rss_kb(pid));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::mutex mu;
  std::atomic<uint32_t> next{0};
  const int64_t t0 = now_ns();
  std::vector<std::thread> clients;
  for (uint32_t c = 0; c < std::max<uint32_t>(o.clients, 1); ++c)
    clients.emplace_back([&] {
      std::map<int, uint64_t> mine;
      for (uint32_t k; (k = next++) < o.bad;) ++mine[bad_request(rep.port, k)];
      std::lock_guard<std::mutex> lk(mu);
      for (auto [s, n] : mine) rep.statuses[s] += n;
    });
  for (auto& t : clients) t.join();
  rep.bad_seconds = (now_ns() - t0) / 1e9;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  sampling = false;
  sampler.join();
  rep.rss_peak_kb = peak;
  rep.rss_after_kb = rss_kb(pid);
  const int fd = connect_to(rep.port);
  send_all(fd, good);
  rep.serving_after = fd >= 0 && read_status(fd, 30000) == 200;
  if (fd >= 0) ::close(fd);
  return rep;
}

}  // namespace sy::bench
