#include "bench/http_client.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace sy::bench {

Url parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    throw std::invalid_argument("endpoint '" + url + "' must start with http:// (no TLS)");
  Url u;
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) u.path = rest.substr(slash);
  const size_t colon = authority.rfind(':');
  u.host = authority.substr(0, colon);
  if (u.host.empty()) throw std::invalid_argument("endpoint '" + url + "' has no host");
  if (colon != std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end || p < 1 || p > 65535)
      throw std::invalid_argument("endpoint '" + url + "' has a bad port '" + port + "'");
    u.port = static_cast<uint16_t>(p);
  }
  return u;
}

namespace {

class Socket {
 public:
  Socket(const Url& u, double timeout_s) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    const int rc = getaddrinfo(u.host.c_str(), std::to_string(u.port).c_str(), &hints, &res);
    if (rc != 0) throw std::runtime_error("cannot resolve " + u.host + ": " + gai_strerror(rc));
    for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) != 0) {
        ::close(fd_);
        fd_ = -1;
      }
    }
    freeaddrinfo(res);
    if (fd_ < 0)
      throw std::runtime_error("cannot connect to " + u.host + ":" + std::to_string(u.port) + ": " +
                               std::strerror(errno));
    timeval tv{static_cast<time_t>(timeout_s),
               static_cast<suseconds_t>((timeout_s - int64_t(timeout_s)) * 1e6)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  void send_all(const std::string& s) {
    for (size_t off = 0; off < s.size();) {
      const ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error(std::string("send failed: ") + std::strerror(errno));
      off += n;
    }
  }
  // Appends what arrives to `buf`; false at end of stream.
  bool read_some(std::string& buf) {
    char tmp[16384];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n < 0)
      throw std::runtime_error(errno == EAGAIN
                                   ? "timed out waiting for the server"
                                   : std::string("recv failed: ") + std::strerror(errno));
    buf.append(tmp, n);
    return n > 0;
  }

 private:
  int fd_ = -1;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

int http_post(const Url& u, const std::string& body, double timeout_s,
              const std::function<void(std::string_view)>& on_body) {
  Socket s(u, timeout_s);
  s.send_all(
      "POST " + u.path + " HTTP/1.1\r\nHost: " + u.host + ":" + std::to_string(u.port) +
      "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nConnection: close\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  std::string buf;
  size_t head_end;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos)
    if (!s.read_some(buf))
      throw std::runtime_error("connection closed before the response headers");
  const std::string head = lower(buf.substr(0, head_end));
  int status = 0;
  if (std::sscanf(head.c_str(), "http/1.%*d %d", &status) != 1)
    throw std::runtime_error("not an HTTP response: '" + buf.substr(0, buf.find("\r\n")) + "'");
  const bool chunked = head.find("transfer-encoding: chunked") != std::string::npos;
  buf.erase(0, head_end + 4);
  if (!chunked) {  // Connection: close delimits the body
    do {
      if (!buf.empty()) on_body(buf);
      buf.clear();
    } while (s.read_some(buf));
    return status;
  }
  for (;;) {  // chunk: size in hex, CRLF, data, CRLF; a zero size ends the body
    size_t eol;
    while ((eol = buf.find("\r\n")) == std::string::npos)
      if (!s.read_some(buf)) throw std::runtime_error("connection closed inside a chunked body");
    const size_t size = std::strtoul(buf.c_str(), nullptr, 16);
    if (size == 0) return status;
    while (buf.size() < eol + 2 + size + 2)
      if (!s.read_some(buf)) throw std::runtime_error("connection closed inside a chunk");
    on_body(std::string_view(buf).substr(eol + 2, size));
    buf.erase(0, eol + 2 + size + 2);
  }
}

void SseParser::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (c != '\n') {
      line_ += c;
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.rfind("data:", 0) == 0) {
      std::string_view d(line_);
      d.remove_prefix(5);
      if (!d.empty() && d.front() == ' ') d.remove_prefix(1);
      on_data_(d);
    }
    line_.clear();
  }
}

size_t chunk_tokens(std::string_view j) {
  const size_t at = j.find("\"token_ids\"");
  if (at != std::string_view::npos) {
    const size_t open = j.find('[', at), close = j.find(']', at);
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return 0;
    const std::string_view inside = j.substr(open + 1, close - open - 1);
    if (inside.find_first_not_of(" \t\r\n") == std::string_view::npos) return 0;
    size_t n = 1;
    for (char c : inside) n += c == ',';
    return n;
  }
  // A text chunk counts once unless its text is empty (vLLM skips empty chunks too).
  size_t t = j.find("\"text\"");
  if (t == std::string_view::npos) return 0;
  t = j.find_first_not_of(" \t:", t + 6);
  return t != std::string_view::npos && j[t] == '"' && t + 1 < j.size() && j[t + 1] != '"' ? 1 : 0;
}

}  // namespace sy::bench
