// An HTTP/1.1 request as the server hands it to a handler, and the response the handler fills:
// a whole body, or a chunked stream that a provider writes piece by piece (server-sent events).
// Member names follow cpp-httplib's, so handlers read the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sy::server::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive ASCII comparison, as header names compare.
bool iequals(std::string_view a, std::string_view b);

struct Request {
  std::string method, target, path, query, version;  // path: the target before '?'
  Headers headers;                                   // in arrival order
  std::string body;
  std::string remote_addr;
  int remote_port = 0, local_port = 0;
  int fd = -1;  // the connection: handlers may poll it for a closed peer, never read or write it

  bool has_header(std::string_view name) const;
  // The first value of `name`, or "".
  std::string get_header_value(std::string_view name) const;
  bool keep_alive() const;  // HTTP/1.1 unless "Connection: close"; 1.0 only with "keep-alive"
};

// Where a streaming provider writes. write() returns false once the client is gone.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual bool write(const char* data, size_t size) = 0;
  virtual void done() = 0;  // the stream is complete
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  std::string content_type;
  // Set: the body is streamed chunked; provider(sink) is called until it returns false or calls
  // sink.done(). on_end(complete) runs once afterwards, also when the client went away.
  std::function<bool(ChunkSink&)> provider;
  std::function<void(bool complete)> on_end;
  bool close = false;  // close the connection after this response

  void set_content(std::string b, std::string type) {
    body = std::move(b);
    content_type = std::move(type);
  }
  void set_header(std::string name, std::string value);  // replaces one of the same name
  std::string get_header_value(std::string_view name) const;
  void set_chunked_content_provider(std::string type, std::function<bool(ChunkSink&)> p,
                                    std::function<void(bool)> end = {}) {
    content_type = std::move(type);
    provider = std::move(p);
    on_end = std::move(end);
  }
};

// The items of a comma-separated list ("a, b ,c"), blanks around them trimmed, empty ones kept.
std::vector<std::string_view> comma_items(std::string_view list);

// %XX sequences decoded ("+" stays); a malformed escape is kept as it is.
std::string percent_decode(std::string_view s);

// The reason phrase of a status code ("Not Found"); "Unknown" for codes it does not know.
const char* reason_phrase(int status);

}  // namespace sy::server::http
