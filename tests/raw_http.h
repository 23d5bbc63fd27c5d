// Test helper: a raw loopback TCP connection to the server, for requests no HTTP client library
// would send (slow, oversized, malformed, half-sent) and for reading the exact answer.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace sy::test {

struct RawClient {
  int fd = -1;
  explicit RawClient(int port, const char* addr = "127.0.0.1") {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, addr, &a.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() {
    if (fd >= 0) ::close(fd);
  }
  // False when the server has closed the connection (or reset it).
  bool send_raw(const std::string& bytes) {
    return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  void send_post(const std::string& path, const std::string& body,
                 const std::string& extra_headers = "") {
    const std::string req =
        "POST " + path +
        " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
    ASSERT_TRUE(send_raw(req));
  }
  // Everything until the server closes or `ms` pass without data.
  std::string read_all(int ms = 5000) {
    std::string got;
    char buf[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, ms) <= 0) break;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  // Reads until `needle` has arrived (false: closed first).
  bool read_until(const std::string& needle, std::string* out = nullptr) {
    std::string got;
    char buf[4096];
    while (got.find(needle) == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      got.append(buf, static_cast<size_t>(n));
    }
    if (out) *out = got;
    return true;
  }
  // True when the server closed the connection within `ms` (reading and dropping what came).
  bool closed_within(int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    char buf[4096];
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
    }
    return false;
  }
};

// "HTTP/1.1 413 Payload Too Large\r\n..." -> 413; the body after the blank line.
inline int status_of(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return -1;
  return std::stoi(response.substr(9, 3));
}
inline std::string body_of_response(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}
inline std::string header_of(const std::string& response, const std::string& name) {
  const size_t at = response.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const size_t from = at + 4 + name.size();
  return response.substr(from, response.find("\r\n", from) - from);
}

}  // namespace sy::test
