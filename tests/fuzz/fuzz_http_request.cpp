// libFuzzer: any bytes through the HTTP request parser, in the pieces the first byte chooses,
// with small limits. It must end in done, need_more or a refusal with a 4xx/5xx status, never
// buffer past its limits, and a completed request's body must respect the body limit.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/http/request_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using sy::server::http::RequestParser;
  sy::server::http::ParseLimits lim;
  lim.max_head_bytes = 512;
  lim.max_headers = 8;
  lim.max_target_bytes = 128;
  lim.max_body_bytes = 256;
  const size_t step = 1 + data[0] % 17;
  RequestParser p(lim);
  std::string buf;
  for (size_t at = 1; at < size; at += step) {
    buf.append(reinterpret_cast<const char*>(data) + at, std::min(step, size - at));
    for (int rounds = 0;; ++rounds) {
      if (rounds > 1000) std::abort();  // the parser must make progress
      const RequestParser::Step s = p.feed(buf);
      if (s == RequestParser::Step::head_ready) continue;
      if (s == RequestParser::Step::error) {
        const int st = p.error().status;
        if (st < 400 || st > 599 || p.error().message.empty()) std::abort();
        return 0;
      }
      if (s == RequestParser::Step::done) {
        if (p.request().body.size() > lim.max_body_bytes) std::abort();
        p.reset();  // a pipelined next request
        if (buf.empty()) break;
        continue;
      }
      break;  // need_more
    }
    // What it holds unparsed is bounded by the head limit (the body goes to the request).
    if (!p.head_parsed() && buf.size() > lim.max_head_bytes + step) std::abort();
    if (p.request().body.size() > lim.max_body_bytes) std::abort();
  }
  return 0;
}
