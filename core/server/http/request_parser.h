// An incremental HTTP/1.1 request parser with hard limits, independent of any socket: bytes go
// in as they arrive, and every limit is checked on the bytes seen so far, so no framing (a
// chunked body, a header sent one byte at a time, a Content-Length that lies) makes it buffer
// more than the limits allow. Refusals carry the HTTP status and a message for the client.
#pragma once

#include <cstdint>
#include <string>

#include "server/http/message.h"

namespace sy::server::http {

struct ParseLimits {
  size_t max_head_bytes = 16 << 10;    // request line and headers (chunked trailers too)
  size_t max_headers = 100;            // header fields (trailers count as well)
  size_t max_target_bytes = 8 << 10;   // the request target
  uint64_t max_body_bytes = 16 << 20;  // the decoded body, whatever the framing
};

struct ParseError {
  int status = 400;
  std::string message;  // a sentence for the client
  std::string code;     // OpenAI-style error code
};

class RequestParser {
 public:
  enum class Step {
    need_more,   // everything in the buffer was used; send more
    head_ready,  // the head just parsed (framing known); call feed() again for the body
    done,        // request() is complete; the buffer holds what follows it
    error,       // error() says why; the connection cannot be reused
  };

  explicit RequestParser(ParseLimits limits = {});
  // Uses bytes from the front of `in` (erasing them) until the request completes, fails or the
  // buffer runs dry.
  Step feed(std::string& in);
  // Ready for the next request on the same connection.
  void reset();

  bool head_parsed() const { return state_ != State::head; }
  bool started() const { return started_; }  // any byte of this request has arrived
  bool chunked() const { return chunked_; }
  uint64_t content_length() const { return content_length_; }  // when !chunked
  bool expects_continue() const { return expect_continue_; }
  Request& request() { return req_; }
  const ParseError& error() const { return err_; }
  const ParseLimits& limits() const { return lim_; }

 private:
  enum class State { head, body, chunk_size, chunk_data, chunk_data_end, trailers, done, failed };
  Step fail(int status, std::string message, std::string code = "invalid_request");
  Step parse_head(std::string_view head);
  Step framing();
  Step feed_chunked(std::string& in);
  // A line from the front of `in` (without its CRLF or LF) when a whole one is there.
  bool take_line(std::string& in, std::string& line, size_t max, bool& too_long);

  ParseLimits lim_;
  State state_ = State::head;
  Request req_;
  ParseError err_;
  bool started_ = false;
  size_t scanned_ = 0;  // head: bytes of the buffer already searched for the blank line
  bool chunked_ = false;
  bool expect_continue_ = false;
  uint64_t content_length_ = 0;
  uint64_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
  size_t fields_ = 0;
};

}  // namespace sy::server::http
