// A bounded closed-loop load generator for `switchyard bench-serve`: N client threads on
// loopback, each sending one completion after another for a fixed time, counting every answer
// that is not a 200 with exactly the requested number of tokens as an error.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "bench/stats.h"

namespace sy::bench {

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  uint32_t clients = 8;      // concurrent connections (at most 256)
  double duration_s = 60;    // at most 3600
  uint32_t max_tokens = 16;  // per request, with ignore_eos so every answer has exactly this many
  uint32_t prompt_len = 32;  // bytes of prompt text
  bool stream = false;
};

struct LoadReport {
  uint64_t requests = 0;  // answered (ok or not)
  uint64_t errors = 0;
  std::map<std::string, uint64_t> error_kinds;  // "status 429", "short answer", "connection", ...
  double duration_s = 0;
  double requests_per_s = 0;
  double tokens_per_s = 0;   // generated, in successful answers
  Summary latency_s;         // e2e of successful requests, client side
};

LoadReport run_load(const LoadOptions& o);
// A few lines for the terminal.
std::string format_report(const LoadOptions& o, const LoadReport& r);
// The server's side of the same run from its /metrics text: mean queue time, TTFT, inter-token
// latency and e2e latency (histogram sum / count over every variant), and the shadow agreement.
std::string server_summary(const std::string& metrics_text);

}  // namespace sy::bench
