#include "bench/http_client.h"

#include <httplib.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "switchyard/common/error.h"

namespace sy::bench {

Url parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    throw sy::Error("endpoint '" + url + "' must start with http:// (no TLS)");
  Url u;
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) u.path = rest.substr(slash);
  const size_t colon = authority.rfind(':');
  u.host = authority.substr(0, colon);
  if (u.host.empty()) throw sy::Error("endpoint '" + url + "' has no host");
  if (colon != std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end || p < 1 || p > 65535)
      throw sy::Error("endpoint '" + url + "' has a bad port '" + port + "'");
    u.port = static_cast<uint16_t>(p);
  }
  return u;
}

struct HttpClient::Impl {
  explicit Impl(const Url& u) : cli(u.host, u.port) {}
  httplib::Client cli;
};

HttpClient::HttpClient(const Url& url, double timeout_s)
    : impl_(std::make_unique<Impl>(url)), url_(url) {
  const auto sec = static_cast<time_t>(timeout_s);
  const auto usec = static_cast<time_t>((timeout_s - double(sec)) * 1e6);
  httplib::Client& c = impl_->cli;
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
}

HttpClient::~HttpClient() = default;

int HttpClient::post(const std::string& path, const std::string& body,
                     const std::function<void(std::string_view)>& on_body) {
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.set_header("Accept", "text/event-stream");
  req.set_header("Content-Type", "application/json");
  req.body = body;
  // The body as it arrives (cpp-httplib undoes the chunking), so streamed tokens are
  // timestamped on receipt.
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    on_body(std::string_view(data, n));
    return true;
  };
  const httplib::Result res = impl_->cli.send(req);
  if (res) return res->status;
  const std::string where = url_.host + ":" + std::to_string(url_.port);
  if (res.error() == httplib::Error::Connection)
    throw sy::Error(SY_ERR_UNAVAILABLE,
                    "cannot connect to " + where + ": " + httplib::to_string(res.error()));
  throw sy::Error(SY_ERR_UNAVAILABLE,
                  "request to " + where + " failed: " + httplib::to_string(res.error()));
}

int http_post(const Url& url, const std::string& body, double timeout_s,
              const std::function<void(std::string_view)>& on_body) {
  return HttpClient(url, timeout_s).post(url.path, body, on_body);
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

size_t chunk_tokens(std::string_view chunk) {
  const auto j = nlohmann::json::parse(chunk, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return 0;
  size_t ids = 0, texts = 0;
  bool has_ids = false;
  for (const auto& c : j.value("choices", nlohmann::json::array())) {
    if (!c.is_object()) continue;
    if (const auto t = c.find("token_ids"); t != c.end() && t->is_array()) {
      has_ids = true;
      ids += t->size();
    }
    // A text chunk counts once unless its text is empty (vLLM skips empty chunks too).
    if (const auto t = c.find("text");
        t != c.end() && t->is_string() && !t->get_ref<const std::string&>().empty())
      ++texts;
  }
  return has_ids ? ids : std::min<size_t>(texts, 1);
}

}  // namespace sy::bench
