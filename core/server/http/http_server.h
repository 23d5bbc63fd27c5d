// The HTTP/1.1 server under `switchyard serve`. One event thread reads every connection
// (non-blocking, epoll) through a RequestParser with hard limits and deadlines, so a slow or
// idle client holds a socket and a small buffer, never a thread; only a complete request goes
// to a worker thread, which runs its handler and writes the answer. Beyond max_connections a new
// connection gets 503 with Retry-After and is closed; a request whose estimated memory does not
// fit the shared budget gets 503 before its body is buffered.
//
// Why not cpp-httplib's server (Debian's 0.11): it gives a thread to each connection from the
// moment it is accepted, has no deadline for a whole header or body (its read timeout restarts
// with every byte), no connection cap, and checks the payload limit of a chunked body only
// after reading it all (issue 15).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/http/memory_budget.h"
#include "server/http/message.h"
#include "server/http/request_parser.h"
#include "server/http/worker_pool.h"

namespace sy::server::http {

struct ServerLimits {
  ParseLimits parse;
  size_t max_connections = 512;  // open at once; more get 503 and are closed
  double header_timeout_s = 10;  // a new connection's first request, or any request's head
  double read_timeout_s = 30;    // a whole request, from its first byte to its last
  double idle_timeout_s = 5;     // keep-alive: the wait for the next request
  double write_timeout_s = 30;   // a response write that makes no progress for this long
  // Requests in flight reserve estimate(body) from this before it is buffered; 0: no budget.
  uint64_t memory_budget_bytes = 1ull << 30;
  uint32_t api_threads = 64;     // workers for routes registered with Pool::api
  uint32_t control_threads = 4;  // workers for everything else (health, metrics, admin)
};

// What a request may cost the server while it is parsed and served: its body, the JSON
// document built from it (bounded by the element limit) and its token ids: three times the
// body plus a fixed 64 KiB.
uint64_t request_memory_estimate(uint64_t body_bytes);

class HttpServer {
 public:
  using Handler = std::function<void(const Request&, Response&)>;
  // Writes an error the server itself raises (limits, timeouts, 404/405) into `res`.
  using ErrorWriter = std::function<void(Response& res, int status, const std::string& message,
                                         const std::string& code)>;
  enum class Pool { api, control };

  explicit HttpServer(ServerLimits limits);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Get(const std::string& path, Handler h, Pool pool = Pool::control);
  void Post(const std::string& path, Handler h, Pool pool = Pool::control);
  // Paths that start with `prefix` and are longer (GET /v1/models/<id>).
  void GetPrefix(const std::string& prefix, Handler h, Pool pool = Pool::control);
  // Runs before the handler of every routed request; returning false sends `res` as it is.
  void set_guard(std::function<bool(const Request&, Response&)> guard) {
    guard_ = std::move(guard);
  }
  void set_error_writer(ErrorWriter w) { error_writer_ = std::move(w); }
  // A handler that threw: fill the response (default: 500 through the error writer).
  void set_exception_handler(std::function<void(const Request&, Response&, std::exception_ptr)> h) {
    exception_handler_ = std::move(h);
  }
  bool is_route(const std::string& path) const;

  // Binds host:port (0: any free port) and returns the port; throws std::runtime_error.
  int bind(const std::string& host, uint16_t port);
  void start();
  // Stops accepting and reading and closes idle connections; workers finish what they run.
  void stop_listening();
  // stop_listening(), then waits for the workers (their handlers must be able to return).
  void stop();

  const ServerLimits& limits() const { return lim_; }
  size_t open_connections() const { return open_.load(); }
  MemoryBudget& budget() { return budget_; }

 private:
  struct Conn;
  struct Route {
    Handler handler;
    Pool pool;
  };
  void reactor();
  void accept_all();
  void on_readable(const std::shared_ptr<Conn>& c);
  void advance(const std::shared_ptr<Conn>& c);
  void dispatch(const std::shared_ptr<Conn>& c);
  void serve(const std::shared_ptr<Conn>& c, Request& req);
  void answer(const Request& req, Response& res);
  void give_back(const std::shared_ptr<Conn>& c, bool keep);
  void take_returned();
  void refuse(const std::shared_ptr<Conn>& c, int status, const std::string& message,
              const std::string& code, bool retry_after = false);
  void close_conn(int fd);
  void expire(int64_t now);
  void wake();
  const Route* find_route(const Request& req, bool& path_known) const;
  bool write_response(Conn& c, const Request& req, Response& res, bool keep);
  void error_response(Response& res, int status, const std::string& message,
                      const std::string& code) const;

  const ServerLimits lim_;
  MemoryBudget budget_;
  std::map<std::string, Route> get_, post_, get_prefix_;
  std::function<bool(const Request&, Response&)> guard_;
  ErrorWriter error_writer_;
  std::function<void(const Request&, Response&, std::exception_ptr)> exception_handler_;

  int listen_fd_ = -1, epoll_fd_ = -1, wake_fd_ = -1;
  int port_ = 0;
  std::thread reactor_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> open_{0};
  std::unique_ptr<WorkerPool> api_pool_, control_pool_;
  // Reactor thread only.
  std::unordered_map<int, std::shared_ptr<Conn>> conns_;
  int64_t accept_paused_until_ = 0;
  // Connections handed back by workers.
  std::mutex returned_mu_;
  std::vector<std::pair<std::shared_ptr<Conn>, bool>> returned_;
  bool reactor_alive_ = false;  // under returned_mu_
};

}  // namespace sy::server::http
