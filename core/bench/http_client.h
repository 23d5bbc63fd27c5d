// A minimal HTTP/1.1 client over POSIX sockets for the bench's HTTP driver: one POST per
// connection, the response body handed over as it arrives (chunked or not), so streamed tokens
// are timestamped on receipt. No TLS: the bench talks to a server on its own network.
#pragma once

#include <cstdint>
#include <functional>
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

// POSTs `body` (JSON) and calls on_body for each piece of the decoded response body. Returns the
// HTTP status; throws std::runtime_error on a connection, timeout or protocol error.
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
