#include "server/http/request_parser.h"

#include <algorithm>
#include <cctype>

namespace sy::server::http {
namespace {

// RFC 9110 token characters (method and header names).
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Decimal digits only, at most 19 of them (fits in uint64 with room).
bool parse_decimal(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

std::string mib(uint64_t bytes) {
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

RequestParser::RequestParser(ParseLimits limits) : lim_(limits) {}

void RequestParser::reset() {
  ParseLimits keep = lim_;
  *this = RequestParser(keep);
}

RequestParser::Step RequestParser::fail(int status, std::string message, std::string code) {
  state_ = State::failed;
  err_ = ParseError{status, std::move(message), std::move(code)};
  return Step::error;
}

bool RequestParser::take_line(std::string& in, std::string& line, size_t max, bool& too_long) {
  too_long = false;
  const size_t nl = in.find('\n');
  if (nl == std::string::npos) {
    too_long = in.size() > max;
    return false;
  }
  if (nl > max) {
    too_long = true;
    return false;
  }
  size_t len = nl;
  if (len > 0 && in[len - 1] == '\r') --len;
  line.assign(in, 0, len);
  in.erase(0, nl + 1);
  return true;
}

RequestParser::Step RequestParser::parse_head(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos || line.find('\0') != std::string_view::npos)
      return fail(400, "The request head contains a bare CR or a NUL byte.");
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return fail(400, "Malformed HTTP request line.");

  // request-line = method SP request-target SP HTTP-version
  const std::string_view rl = lines[0];
  const size_t sp1 = rl.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "Malformed HTTP request line.");
  const std::string_view method = rl.substr(0, sp1);
  const std::string_view target = rl.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = rl.substr(sp2 + 1);
  if (!is_token(method) || method.size() > 32) return fail(400, "Malformed HTTP request line.");
  if (target.size() > lim_.max_target_bytes)
    return fail(
        414,
        "The request target is longer than " + std::to_string(lim_.max_target_bytes) + " bytes.",
        "uri_too_long");
  if (target.empty() || target.front() != '/' ||
      std::any_of(target.begin(), target.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }))
    return fail(400, "The request target must be an absolute path (\"/v1/...\").");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9')
    return fail(400, "Malformed HTTP request line.");
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return fail(505, "HTTP version " + std::string(version) + " is not supported; use HTTP/1.1.",
                "http_version_not_supported");
  req_.method = method;
  req_.target = target;
  req_.version = version;
  const size_t q = target.find('?');
  req_.path = target.substr(0, q);
  req_.query = q == std::string_view::npos ? "" : target.substr(q + 1);

  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (++fields_ > lim_.max_headers)
      return fail(
          431, "The request has more than " + std::to_string(lim_.max_headers) + " header fields.",
          "headers_too_large");
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
      return fail(400, "Folded header lines are not accepted.");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return fail(400, "Malformed header field: expected 'Name: value'.");
    req_.headers.emplace_back(std::string(line.substr(0, colon)),
                              std::string(trim(line.substr(colon + 1))));
  }
  return framing();
}

RequestParser::Step RequestParser::framing() {
  bool have_length = false;
  bool have_te = false;
  std::string te;
  for (const auto& [k, v] : req_.headers) {
    if (iequals(k, "Content-Length")) {
      uint64_t n = 0;
      if (!parse_decimal(v, n)) return fail(400, "Invalid Content-Length header.");
      if (have_length && n != content_length_)
        return fail(400, "Conflicting Content-Length headers.");
      have_length = true;
      content_length_ = n;
    } else if (iequals(k, "Transfer-Encoding")) {
      te += (te.empty() ? "" : ",") + lower(v);
      have_te = true;
    } else if (iequals(k, "Expect")) {
      if (!iequals(trim(v), "100-continue"))
        return fail(417, "Expectation '" + v.substr(0, 64) + "' is not supported.",
                    "expectation_failed");
      expect_continue_ = true;
    }
  }
  if (have_te) {
    if (have_length) return fail(400, "Content-Length and Transfer-Encoding cannot both be set.");
    if (req_.version == "HTTP/1.0")
      return fail(400, "Transfer-Encoding is not allowed in an HTTP/1.0 request.");
    std::string_view t = trim(te);
    if (t != "chunked")
      return fail(501,
                  "Transfer-Encoding '" + std::string(t.substr(0, 64)) +
                      "' is not supported; send the body plain or chunked.",
                  "not_implemented");
    chunked_ = true;
    state_ = State::chunk_size;
    return Step::head_ready;
  }
  if (content_length_ > lim_.max_body_bytes)
    return fail(413, "The request body is larger than " + mib(lim_.max_body_bytes) + ".",
                "payload_too_large");
  state_ = content_length_ > 0 ? State::body : State::done;
  return Step::head_ready;
}

RequestParser::Step RequestParser::feed_chunked(std::string& in) {
  std::string line;
  bool too_long = false;
  for (;;) {
    switch (state_) {
      case State::chunk_size: {
        // chunk-size [; extensions] CRLF; extensions are bounded and ignored.
        if (!take_line(in, line, 1024, too_long))
          return too_long ? fail(400, "Malformed chunked body: chunk-size line too long.")
                          : Step::need_more;
        std::string_view s = line;
        s = trim(s.substr(0, s.find(';')));
        if (s.empty() || s.size() > 15 || !std::all_of(s.begin(), s.end(), [](char c) {
              return std::isxdigit(static_cast<unsigned char>(c)) != 0;
            }))
          return fail(400, "Malformed chunked body: bad chunk size.");
        const uint64_t n = std::stoull(std::string(s), nullptr, 16);
        if (n > lim_.max_body_bytes || req_.body.size() + n > lim_.max_body_bytes)
          return fail(413, "The request body is larger than " + mib(lim_.max_body_bytes) + ".",
                      "payload_too_large");
        chunk_left_ = n;
        state_ = n == 0 ? State::trailers : State::chunk_data;
        break;
      }
      case State::chunk_data: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(chunk_left_, in.size()));
        req_.body.append(in, 0, take);
        in.erase(0, take);
        chunk_left_ -= take;
        if (chunk_left_ > 0) return Step::need_more;
        state_ = State::chunk_data_end;
        break;
      }
      case State::chunk_data_end:
        if ((!in.empty() && in[0] != '\r' && in[0] != '\n') ||
            (in.size() >= 2 && in[0] == '\r' && in[1] != '\n'))
          return fail(400, "Malformed chunked body: missing CRLF after chunk data.");
        if (!take_line(in, line, 2, too_long))
          return too_long ? fail(400, "Malformed chunked body: missing CRLF after chunk data.")
                          : Step::need_more;
        if (!line.empty())
          return fail(400, "Malformed chunked body: missing CRLF after chunk data.");
        state_ = State::chunk_size;
        break;
      case State::trailers: {
        const size_t room =
            lim_.max_head_bytes > trailer_bytes_ ? lim_.max_head_bytes - trailer_bytes_ : 0;
        if (!take_line(in, line, room, too_long))
          return too_long ? fail(431,
                                 "The request trailers are larger than " +
                                     std::to_string(lim_.max_head_bytes) + " bytes.",
                                 "headers_too_large")
                          : Step::need_more;
        trailer_bytes_ += line.size() + 2;
        if (line.empty()) {
          state_ = State::done;
          return Step::done;
        }
        if (++fields_ > lim_.max_headers)
          return fail(
              431,
              "The request has more than " + std::to_string(lim_.max_headers) + " header fields.",
              "headers_too_large");
        break;  // trailer fields are read and dropped
      }
      default:
        return Step::error;
    }
  }
}

RequestParser::Step RequestParser::feed(std::string& in) {
  switch (state_) {
    case State::failed:
      return Step::error;
    case State::done:
      return Step::done;
    case State::head: {
      // Empty lines before a request line are ignored (RFC 9112 2.2).
      size_t skip = 0;
      while (skip < in.size() && (in[skip] == '\r' || in[skip] == '\n')) ++skip;
      if (skip) {
        in.erase(0, skip);
        scanned_ = 0;
        started_ = true;
      }
      if (in.empty()) return Step::need_more;
      started_ = true;
      size_t end = std::string::npos;
      size_t i = scanned_;
      for (; i < in.size(); ++i) {
        if (in[i] != '\n') continue;
        if (i + 1 < in.size() && in[i + 1] == '\n') {
          end = i + 2;
          break;
        }
        if (i + 2 < in.size() && in[i + 1] == '\r' && in[i + 2] == '\n') {
          end = i + 3;
          break;
        }
        if (i + 2 >= in.size() && !(i + 1 < in.size() && in[i + 1] != '\r')) break;  // undecided
      }
      if (end == std::string::npos) {
        scanned_ = i;
        if (in.size() > lim_.max_head_bytes)
          return fail(
              431,
              "The request head is larger than " + std::to_string(lim_.max_head_bytes) + " bytes.",
              "headers_too_large");
        return Step::need_more;
      }
      if (end > lim_.max_head_bytes)
        return fail(
            431,
            "The request head is larger than " + std::to_string(lim_.max_head_bytes) + " bytes.",
            "headers_too_large");
      const std::string head = in.substr(0, end);
      in.erase(0, end);
      return parse_head(head);
    }
    case State::body: {
      const uint64_t left = content_length_ - req_.body.size();
      const size_t take = static_cast<size_t>(std::min<uint64_t>(left, in.size()));
      if (req_.body.capacity() < content_length_) req_.body.reserve(content_length_);
      req_.body.append(in, 0, take);
      in.erase(0, take);
      if (req_.body.size() < content_length_) return Step::need_more;
      state_ = State::done;
      return Step::done;
    }
    default:
      return feed_chunked(in);
  }
}

}  // namespace sy::server::http
