#include "server/http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "host/host_api.h"
#include "host/log.h"
#include "switchyard/common/error.h"

namespace sy::server::http {

uint64_t request_memory_estimate(uint64_t body_bytes) {
  return 3 * body_bytes + (64u << 10);
}

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kLingerNs = 2 * kSecond;    // an answered, refused connection drains this long
constexpr size_t kTrimAfterBytes = 1u << 20;  // give freed memory back after bodies this large

int64_t ns(double seconds) {
  return static_cast<int64_t>(seconds * 1e9);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Sends all of `data` on a non-blocking socket, waiting at most `timeout_ms` for each stall.
bool send_all(int fd, const char* data, size_t size, int timeout_ms) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, timeout_ms);
      if (r <= 0 || (p.revents & (POLLERR | POLLHUP))) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool endpoint(const sockaddr_storage& a, std::string& addr, int& port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, buf, sizeof buf);
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &in.sin6_addr, buf, sizeof buf);
    port = ntohs(in.sin6_port);
  } else {
    return false;
  }
  addr = buf;
  return true;
}

// Chunked transfer coding of a streamed body (or the raw bytes for an HTTP/1.0 client).
class SocketSink : public ChunkSink {
 public:
  SocketSink(int fd, bool chunked, int timeout_ms)
      : fd_(fd), chunked_(chunked), timeout_ms_(timeout_ms) {}
  bool write(const char* data, size_t size) override {
    if (failed_ || done_) return false;
    if (size == 0) return true;
    if (chunked_) {
      char head[24];
      const int n = std::snprintf(head, sizeof head, "%zx\r\n", size);
      std::string chunk(head, static_cast<size_t>(n));
      chunk.append(data, size);
      chunk += "\r\n";
      failed_ = !send_all(fd_, chunk.data(), chunk.size(), timeout_ms_);
    } else {
      failed_ = !send_all(fd_, data, size, timeout_ms_);
    }
    return !failed_;
  }
  void done() override {
    if (failed_ || done_) return;
    done_ = true;
    if (chunked_) failed_ = !send_all(fd_, "0\r\n\r\n", 5, timeout_ms_);
  }
  bool finished() const { return done_ && !failed_; }
  bool failed() const { return failed_; }

 private:
  int fd_;
  bool chunked_;
  int timeout_ms_;
  bool failed_ = false, done_ = false;
};

}  // namespace

struct HttpServer::Conn {
  enum class State { reading, busy, closing };
  int fd = -1;
  std::string peer;
  int peer_port = 0, local_port = 0;
  std::string in;  // received, not yet parsed
  RequestParser parser;
  Reservation reservation;
  State state = State::reading;
  int64_t deadline = 0;       // reading: when it is dropped; closing: when it is closed
  int64_t request_start = 0;  // first byte of the request being read (0: none yet)
  bool head_done = false;
};

HttpServer::HttpServer(ServerLimits limits) : lim_(limits), budget_(limits.memory_budget_bytes) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::Get(const std::string& path, Handler h, Pool pool) {
  get_[path] = Route{std::move(h), pool};
}
void HttpServer::Post(const std::string& path, Handler h, Pool pool) {
  post_[path] = Route{std::move(h), pool};
}
void HttpServer::GetPrefix(const std::string& prefix, Handler h, Pool pool) {
  get_prefix_[prefix] = Route{std::move(h), pool};
}

bool HttpServer::is_route(const std::string& path) const {
  if (get_.count(path) || post_.count(path)) return true;
  for (const auto& [p, _] : get_prefix_)
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0) return true;
  return false;
}

const HttpServer::Route* HttpServer::find_route(const Request& req, bool& path_known) const {
  path_known = is_route(req.path);
  if (req.method == "GET") {
    if (auto it = get_.find(req.path); it != get_.end()) return &it->second;
    const Route* best = nullptr;
    size_t best_len = 0;
    for (const auto& [p, r] : get_prefix_)
      if (req.path.size() > p.size() && req.path.compare(0, p.size(), p) == 0 &&
          p.size() >= best_len) {
        best = &r;
        best_len = p.size();
      }
    return best;
  }
  if (req.method == "POST")
    if (auto it = post_.find(req.path); it != post_.end()) return &it->second;
  return nullptr;
}

void HttpServer::error_response(Response& res, int status, const std::string& message,
                                const std::string& code) const {
  res.status = status;
  if (error_writer_) return error_writer_(res, status, message, code);
  res.set_content("{\"error\":{\"message\":\"" + message + "\"}}", "application/json");
}

int HttpServer::bind(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    throw sy::Error(SY_ERR_UNAVAILABLE, "cannot resolve " + host + ": " + gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = res; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      sockaddr_storage local{};
      socklen_t len = sizeof local;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
      std::string addr;
      endpoint(local, addr, port_);
      listen_fd_ = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (listen_fd_ < 0)
    throw sy::Error(SY_ERR_UNAVAILABLE, "cannot listen on " + host + ":" + service + ": " + why);
  return port_;
}

void HttpServer::start() {
  if (listen_fd_ < 0) throw sy::Bug("HttpServer::start before bind");
  // glibc raises its mmap threshold to the size of each large block freed, after which bodies
  // and documents of hundreds of kB come from the thread arenas and stay resident once freed.
  // A fixed threshold keeps every such buffer in its own mapping, given back on free.
  ::mallopt(M_MMAP_THRESHOLD, 256 << 10);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0)
    throw sy::Error(SY_ERR_UNAVAILABLE,
                    std::string("cannot create the event loop: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  api_pool_ = std::make_unique<WorkerPool>(std::max<uint32_t>(lim_.api_threads, 1));
  control_pool_ = std::make_unique<WorkerPool>(std::max<uint32_t>(lim_.control_threads, 1));
  {
    std::lock_guard<std::mutex> lk(returned_mu_);
    reactor_alive_ = true;
  }
  reactor_ = std::thread([this] { reactor(); });
}

void HttpServer::wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) [[maybe_unused]]
    auto n = ::write(wake_fd_, &one, sizeof one);
}

void HttpServer::stop_listening() {
  stopping_ = true;
  wake();
  if (reactor_.joinable()) reactor_.join();
}

void HttpServer::stop() {
  stop_listening();
  if (api_pool_) api_pool_->stop();
  if (control_pool_) control_pool_->stop();
  for (int* fd : {&epoll_fd_, &wake_fd_, &listen_fd_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

void HttpServer::accept_all() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: stop polling the listener for a moment instead of spinning.
        logger()->warn("http: cannot accept a connection: {}", std::strerror(errno));
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        accept_paused_until_ = now_ns() + kSecond / 10;
      }
      return;
    }
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    if (conns_.size() >= lim_.max_connections) {
      // Answer without reading the request, then close: the client learns when to retry.
      Response res;
      error_response(res, 503,
                     "The server has too many open connections (" +
                         std::to_string(lim_.max_connections) + "); retry shortly.",
                     "too_many_connections");
      const std::string msg =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + res.content_type +
          "\r\nContent-Length: " + std::to_string(res.body.size()) +
          "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + res.body;
      [[maybe_unused]] ssize_t n = ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::shutdown(fd, SHUT_WR);
      char drain[4096];
      while (::recv(fd, drain, sizeof drain, MSG_DONTWAIT) > 0) {
      }
      ::close(fd);
      continue;
    }
    auto c = std::make_shared<Conn>();
    c->fd = fd;
    c->parser = RequestParser(lim_.parse);
    c->reservation = Reservation(lim_.memory_budget_bytes ? &budget_ : nullptr);
    endpoint(peer, c->peer, c->peer_port);
    c->local_port = port_;
    c->deadline = now_ns() + ns(lim_.header_timeout_s);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    conns_[fd] = std::move(c);
    ++open_;
  }
}

void HttpServer::close_conn(int fd) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  if (conns_.erase(fd)) --open_;
}

void HttpServer::refuse(const std::shared_ptr<Conn>& c, int status, const std::string& message,
                        const std::string& code, bool retry_after) {
  Response res;
  error_response(res, status, message, code);
  std::string msg = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                    "\r\nContent-Type: " + res.content_type +
                    "\r\nContent-Length: " + std::to_string(res.body.size()) + "\r\n";
  if (retry_after) msg += "Retry-After: 1\r\n";
  msg += "Connection: close\r\n\r\n" + res.body;
  [[maybe_unused]] ssize_t n = ::send(c->fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  // Half-close and read what the client still sends for a moment, so closing does not reset
  // the connection before it has read the answer.
  ::shutdown(c->fd, SHUT_WR);
  c->state = Conn::State::closing;
  c->deadline = now_ns() + kLingerNs;
  const bool large = c->parser.request().body.size() >= kTrimAfterBytes;
  c->in.clear();
  c->in.shrink_to_fit();
  c->parser = RequestParser(lim_.parse);
  c->reservation.release();
  if (large) ::malloc_trim(0);
}

void HttpServer::on_readable(const std::shared_ptr<Conn>& c) {
  char buf[64 << 10];
  const ssize_t n = ::recv(c->fd, buf, sizeof buf, 0);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    close_conn(c->fd);
    return;
  }
  if (n < 0 || c->state != Conn::State::reading) return;  // closing: discarded
  c->in.append(buf, static_cast<size_t>(n));
  advance(c);
}

void HttpServer::advance(const std::shared_ptr<Conn>& c) {
  for (;;) {
    const bool was_started = c->parser.started();
    const RequestParser::Step s = c->parser.feed(c->in);
    const int64_t now = now_ns();
    if (!was_started && c->parser.started()) {
      c->request_start = now;
      c->deadline = now + ns(lim_.header_timeout_s);
    }
    switch (s) {
      case RequestParser::Step::need_more:
        if (c->parser.head_parsed() && c->parser.chunked() &&
            !c->reservation.grow_to(
                request_memory_estimate(c->parser.request().body.size() + c->in.size())))
          return refuse(c, 503,
                        "The server's request memory budget is in use by other requests; retry "
                        "shortly.",
                        "server_busy", true);
        return;
      case RequestParser::Step::head_ready: {
        c->head_done = true;
        c->deadline = c->request_start + ns(lim_.read_timeout_s);
        const uint64_t body = c->parser.chunked() ? 0 : c->parser.content_length();
        if (!c->reservation.grow_to(request_memory_estimate(body)))
          return refuse(c, 503,
                        "The server's request memory budget is in use by other requests; retry "
                        "shortly.",
                        "server_busy", true);
        if (c->parser.expects_continue() && (c->parser.chunked() || body > 0) && c->in.empty()) {
          static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
          [[maybe_unused]] ssize_t n =
              ::send(c->fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        continue;
      }
      case RequestParser::Step::done:
        return dispatch(c);
      case RequestParser::Step::error: {
        const ParseError& e = c->parser.error();
        return refuse(c, e.status, e.message, e.code);
      }
    }
  }
}

void HttpServer::dispatch(const std::shared_ptr<Conn>& c) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
  c->state = Conn::State::busy;
  auto req = std::make_shared<Request>(std::move(c->parser.request()));
  req->remote_addr = c->peer;
  req->remote_port = c->peer_port;
  req->local_port = c->local_port;
  req->fd = c->fd;
  bool known = false;
  const Route* r = find_route(*req, known);
  WorkerPool& pool = r && r->pool == Pool::api ? *api_pool_ : *control_pool_;
  pool.submit([this, c, req] { serve(c, *req); });
}

void HttpServer::answer(const Request& req, Response& res) {
  bool known = false;
  const Route* r = find_route(req, known);
  if (!r) {
    if (known) {
      error_response(res, 405, "Method " + req.method + " is not allowed on " + req.path + ".",
                     "method_not_allowed");
      return;
    }
    error_response(res, 404, "Unknown path: " + req.method + " " + req.path + ".", "not_found");
    return;
  }
  try {
    if (guard_ && !guard_(req, res)) return;
    r->handler(req, res);
  } catch (...) {
    res = Response();
    if (exception_handler_)
      exception_handler_(req, res, std::current_exception());
    else
      error_response(res, 500, "Internal server error.", "internal_error");
  }
}

bool HttpServer::write_response(Conn& c, const Request& req, Response& res, bool keep) {
  const bool http10 = req.version == "HTTP/1.0";
  const bool stream = static_cast<bool>(res.provider);
  if (stream && http10) keep = false;  // no chunked coding: the body ends with the connection
  std::string head =
      "HTTP/1.1 " + std::to_string(res.status) + " " + reason_phrase(res.status) + "\r\n";
  for (const auto& [k, v] : res.headers) head += k + ": " + v + "\r\n";
  if (!res.content_type.empty()) head += "Content-Type: " + res.content_type + "\r\n";
  if (stream) {
    if (!http10) head += "Transfer-Encoding: chunked\r\n";
  } else {
    head += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  }
  if (!keep)
    head += "Connection: close\r\n";
  else if (http10)
    head += "Connection: keep-alive\r\n";
  head += "\r\n";
  const int timeout_ms = static_cast<int>(lim_.write_timeout_s * 1000);
  if (!stream) {
    if (req.method == "HEAD") return send_all(c.fd, head.data(), head.size(), timeout_ms);
    head += res.body;
    return send_all(c.fd, head.data(), head.size(), timeout_ms);
  }
  SocketSink sink(c.fd, !http10, timeout_ms);
  bool ok = send_all(c.fd, head.data(), head.size(), timeout_ms);
  while (ok && !sink.finished() && !sink.failed())
    if (!res.provider(sink)) break;
  ok = ok && sink.finished();
  if (res.on_end) res.on_end(ok);
  return ok;
}

void HttpServer::serve(const std::shared_ptr<Conn>& c, Request& req) {
  Response res;
  answer(req, res);
  const bool keep = req.keep_alive() && !res.close && !stopping_;
  const bool ok = write_response(*c, req, res, keep);
  const size_t body = req.body.size();
  req = Request();
  res = Response();
  c->reservation.release();
  if (body >= kTrimAfterBytes) ::malloc_trim(0);  // large bodies leave freed heap behind
  give_back(c, keep && ok);
}

void HttpServer::give_back(const std::shared_ptr<Conn>& c, bool keep) {
  {
    std::lock_guard<std::mutex> lk(returned_mu_);
    if (reactor_alive_) {
      returned_.emplace_back(c, keep);
      wake();
      return;
    }
  }
  ::close(c->fd);  // the event loop has stopped: nobody else owns the socket now
  --open_;
}

void HttpServer::take_returned() {
  std::vector<std::pair<std::shared_ptr<Conn>, bool>> back;
  {
    std::lock_guard<std::mutex> lk(returned_mu_);
    back.swap(returned_);
  }
  const int64_t now = now_ns();
  for (auto& [c, keep] : back) {
    if (!keep || stopping_) {
      close_conn(c->fd);
      continue;
    }
    c->parser.reset();
    c->state = Conn::State::reading;
    c->request_start = 0;
    c->head_done = false;
    c->deadline = now + ns(lim_.idle_timeout_s);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = c->fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev);
    if (!c->in.empty()) advance(c);  // a pipelined request already arrived
  }
}

void HttpServer::expire(int64_t now) {
  std::vector<std::shared_ptr<Conn>> due;
  for (const auto& [fd, c] : conns_)
    if (c->state != Conn::State::busy && now >= c->deadline) due.push_back(c);
  for (const auto& c : due) {
    if (c->state == Conn::State::closing || !c->parser.started()) {
      close_conn(c->fd);  // an idle keep-alive connection, or a refused one done draining
      continue;
    }
    const bool head = !c->head_done;
    refuse(c, 408,
           head
               ? "The request head was not received within " + seconds_text(lim_.header_timeout_s) +
                     " s."
               : "The request was not received within " + seconds_text(lim_.read_timeout_s) + " s.",
           "request_timeout");
  }
}

void HttpServer::reactor() {
  epoll_event events[128];
  int64_t next_expiry = 0;
  while (!stopping_) {
    const int n = ::epoll_wait(epoll_fd_, events, 128, 100);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd_) {
        accept_all();
      } else if (fd == wake_fd_) {
        uint64_t x;
        [[maybe_unused]] auto r = ::read(wake_fd_, &x, sizeof x);
      } else if (auto it = conns_.find(fd); it != conns_.end()) {
        const std::shared_ptr<Conn> c = it->second;  // on_readable may drop it from the map
        on_readable(c);
      }
    }
    take_returned();
    const int64_t now = now_ns();
    if (accept_paused_until_ && now >= accept_paused_until_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = listen_fd_;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
      accept_paused_until_ = 0;
    }
    if (now >= next_expiry) {
      expire(now);
      next_expiry = now + kSecond / 20;
    }
  }
  std::vector<std::pair<std::shared_ptr<Conn>, bool>> back;
  {
    std::lock_guard<std::mutex> lk(returned_mu_);
    reactor_alive_ = false;
    back.swap(returned_);
  }
  for (auto& [c, keep] : back) close_conn(c->fd);
  std::vector<int> idle;
  for (const auto& [fd, c] : conns_)
    if (c->state != Conn::State::busy) idle.push_back(fd);
  for (int fd : idle) close_conn(fd);
  conns_.clear();  // busy ones are closed by their worker
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  ::close(listen_fd_);
  listen_fd_ = -1;
}

}  // namespace sy::server::http
