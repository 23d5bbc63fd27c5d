// `switchyard bench-hardening`: a server in a child process (any `switchyard` binary, so
// today's build and main's can be compared in one run) under hostile traffic, measured from
// outside: /health latency while many slow-loris connections are open, then the child's
// resident memory before, during and after thousands of mixed bad requests (malformed, nested,
// oversized, chunked past the limit, header floods, prompts too long to tokenize), with the
// status codes they got.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sy::bench {

struct HardeningOptions {
  std::string exe;       // the switchyard binary to serve with
  std::string config;    // its serve config
  uint32_t slow = 200;   // slow connections held open during the /health probes
  uint32_t probes = 30;  // /health requests while they are open (one per 200 ms)
  uint32_t bad = 10000;  // bad requests
  uint32_t clients = 8;  // threads sending them
  std::string log_path;  // the child's output
};

struct HardeningReport {
  uint16_t port = 0;
  std::vector<double> health_ms;  // per probe; < 0: no answer within 5 s
  uint32_t slow_open_min = 0, slow_reopened = 0;
  uint64_t rss_before_kb = 0, rss_peak_kb = 0, rss_after_kb = 0;
  std::map<int, uint64_t> statuses;  // status code -> count (0: no answer / connection error)
  double bad_seconds = 0;
  bool serving_after = false;  // a good completion succeeded at the end
};

// Throws std::runtime_error when the server cannot be started.
HardeningReport run_hardening_bench(const HardeningOptions& o);

}  // namespace sy::bench
