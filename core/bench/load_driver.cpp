#include "bench/load_driver.h"

#include <algorithm>
#include <sstream>
#include <thread>
#include <vector>

#include "bench/http_client.h"
#include "bench/http_driver.h"
#include "host/host_api.h"

namespace sy::bench {
namespace {

struct ClientResult {
  uint64_t requests = 0, errors = 0, tokens = 0;
  std::map<std::string, uint64_t> kinds;
  std::vector<double> latency;
};

std::string prompt_for(uint32_t client, uint64_t n, uint32_t len) {
  std::string p = "client " + std::to_string(client) + " request " + std::to_string(n) + ": ";
  while (p.size() < len) p += "the switchyard routes each train ";
  p.resize(len);
  return p;
}

void client_loop(const LoadOptions& o, uint32_t index, int64_t end_ns, ClientResult& out) {
  HttpClient client(Url{o.host, static_cast<uint16_t>(o.port), "/v1/completions"}, 120);
  for (uint64_t n = 0; now_ns() < end_ns; ++n) {
    const std::string body =
        completion_body(prompt_for(index, n, o.prompt_len), o.max_tokens, o.stream);
    const int64_t t0 = now_ns();
    const CompletionAnswer a = post_completion(client, "/v1/completions", body, o.stream);
    const int64_t t1 = now_ns();
    ++out.requests;
    std::string kind;
    if (a.status == 0)
      kind = "connection: " + a.error;
    else if (a.status != 200)
      kind = "status " + std::to_string(a.status);
    else if (!a.error.empty())
      kind = a.error;
    else if (a.tokens != o.max_tokens)
      kind = "answer with " + std::to_string(a.tokens) + " tokens";
    if (!kind.empty()) {
      ++out.errors;
      ++out.kinds[kind];
      continue;
    }
    out.tokens += a.tokens;
    out.latency.push_back((t1 - t0) / 1e9);
  }
}

}  // namespace

LoadReport run_load(const LoadOptions& opt) {
  LoadOptions o = opt;
  o.clients = std::clamp<uint32_t>(o.clients, 1, 256);
  o.duration_s = std::clamp(o.duration_s, 0.1, 3600.0);
  std::vector<ClientResult> results(o.clients);
  std::vector<std::thread> threads;
  const int64_t t0 = now_ns();
  const int64_t end = t0 + static_cast<int64_t>(o.duration_s * 1e9);
  for (uint32_t i = 0; i < o.clients; ++i)
    threads.emplace_back([&, i] { client_loop(o, i, end, results[i]); });
  for (auto& t : threads) t.join();
  LoadReport r;
  r.duration_s = (now_ns() - t0) / 1e9;  // includes the requests still in flight at the end
  std::vector<double> lat;
  uint64_t tokens = 0;
  for (const auto& c : results) {
    r.requests += c.requests;
    r.errors += c.errors;
    tokens += c.tokens;
    for (const auto& [k, n] : c.kinds) r.error_kinds[k] += n;
    lat.insert(lat.end(), c.latency.begin(), c.latency.end());
  }
  r.requests_per_s = r.requests / r.duration_s;
  r.tokens_per_s = tokens / r.duration_s;
  r.latency_s = bench::summarize(lat);
  return r;
}

std::string format_report(const LoadOptions& o, const LoadReport& r) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "load: %u clients, %.1f s, max_tokens %u, prompt %u bytes%s\n",
                o.clients, r.duration_s, o.max_tokens, o.prompt_len, o.stream ? ", streaming" : "");
  os << buf;
  std::snprintf(buf, sizeof buf,
                "requests: %llu, errors: %llu, requests/s: %.1f, generated tokens/s: %.1f\n",
                static_cast<unsigned long long>(r.requests),
                static_cast<unsigned long long>(r.errors), r.requests_per_s, r.tokens_per_s);
  os << buf;
  if (r.latency_s.n) {
    std::snprintf(buf, sizeof buf,
                  "latency ms: mean %.1f, p50 %.1f, p90 %.1f, p99 %.1f, max %.1f\n",
                  r.latency_s.mean * 1e3, r.latency_s.p50 * 1e3, r.latency_s.p90 * 1e3,
                  r.latency_s.p99 * 1e3, r.latency_s.max * 1e3);
    os << buf;
  }
  for (const auto& [k, n] : r.error_kinds) os << "  error: " << k << " x" << n << '\n';
  return os.str();
}

std::string server_summary(const std::string& text) {
  // Sums every series of `family` (any labels).
  auto total = [&](const std::string& family) {
    double sum = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(family + "{", 0) == 0 || line.rfind(family + " ", 0) == 0)
        sum += std::stod(line.substr(line.rfind(' ') + 1));
    return sum;
  };
  auto mean_ms = [&](const std::string& h) {
    const double n = total(h + "_count");
    return n > 0 ? total(h + "_sum") / n * 1e3 : 0.0;
  };
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "server: mean queue %.1f ms, TTFT %.1f ms, inter-token %.2f ms, e2e %.1f ms; "
                "mean batch %.1f seqs; requests finished %.0f\n",
                mean_ms("switchyard:request_queue_time_seconds"),
                mean_ms("switchyard:time_to_first_token_seconds"),
                mean_ms("switchyard:inter_token_latency_seconds"),
                mean_ms("switchyard:e2e_request_latency_seconds"),
                total("switchyard:batch_size_count") > 0
                    ? total("switchyard:batch_size_sum") / total("switchyard:batch_size_count")
                    : 0.0,
                total("switchyard:request_success_total"));
  std::string out = buf;
  const double compared = total("switchyard:shadow_tokens_compared_total");
  if (compared > 0) {
    std::snprintf(buf, sizeof buf, "shadow: %.0f runs compared, token agreement %.3f, %.0f exact\n",
                  total("switchyard:shadow_requests_total"),
                  total("switchyard:shadow_tokens_agreed_total") / compared,
                  total("switchyard:shadow_exact_match_total"));
    out += buf;
  }
  return out;
}

}  // namespace sy::bench
