// The bench's HTTP client (cpp-httplib): one POST per connection, the response body handed
// over as it arrives, so streamed tokens are timestamped on receipt; SSE and completion-chunk
// parsing. No TLS: the bench talks to a server on its own network.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace sy::bench {

struct Url {
  std::string host;
  uint16_t port = 80;
  std::string path = "/";
};

// "http://host[:port][/path]"; throws std::invalid_argument saying what is wrong.
Url parse_url(const std::string& url);

// A connection to one server, kept alive between requests (cpp-httplib reconnects when the
// server closed it). Timeouts (connect, send, receive) of timeout_s each.
class HttpClient {
 public:
  HttpClient(const Url& url, double timeout_s);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  // POSTs `body` (JSON) to `path` and calls on_body for each piece of the decoded response body
  // as it arrives. Returns the HTTP status; throws std::runtime_error on a connection, timeout or
  // protocol error.
  int post(const std::string& path, const std::string& body,
           const std::function<void(std::string_view)>& on_body);

 private:
  struct Impl;  // cpp-httplib stays out of this header (its Debian build wants its own macros)
  std::unique_ptr<Impl> impl_;
  Url url_;
};

// One POST on a fresh connection: HttpClient(url, timeout_s).post(url.path, ...).
int http_post(const Url& url, const std::string& body, double timeout_s,
              const std::function<void(std::string_view)>& on_body);

// Reads a stream of server-sent events; calls on_data with each `data:` payload.
class SseParser {
 public:
  explicit SseParser(std::function<void(std::string_view)> on_data)
      : on_data_(std::move(on_data)) {}
  void feed(std::string_view bytes);

 private:
  std::function<void(std::string_view)> on_data_;
  std::string line_;
};

// Output tokens in one OpenAI completion stream chunk: the length of its "token_ids" array
// (Switchyard's server sends them), else 1 for a chunk with non-empty "text", else 0.
size_t chunk_tokens(std::string_view json);

}  // namespace sy::bench
