// The serving config: one variant (a plain single-variant file, configs/dense.toml) or several
// [[variants]] with traffic weights, plus a [serve] table for the HTTP server, the baseline that
// a rollback returns to, and an optional shadow. Errors name file:line:column: key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "server/kv_events_config.h"

namespace sy::server {

struct ShadowSpec {
  std::string variant;  // a [[variants]] name; its output is compared, never returned
  double fraction = 0;  // of requests, chosen by request id
};

struct ServeOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;                   // 0: any free port
  uint32_t max_queue = 256;               // per variant: requests accepted but not yet running
  double request_timeout_s = 600;         // a request still unfinished after this is aborted
  // A request's `priority`: "larger_first" (the engine's order) or "vllm" (smaller first).
  std::string priority_order = "larger_first";
  std::string model_name = "switchyard";  // what /v1/models lists and the model_name label
  std::string baseline;  // the variant a rollback sends all traffic to (default: first)
  std::optional<ShadowSpec> shadow;
  uint32_t http_threads = 64;  // completion requests being answered at once
  uint32_t watch_ms = 500;     // config file poll interval; 0: no watching
  // Limits that hold whatever the framing (server/http/http_server.h).
  uint32_t max_connections = 512;        // open at once; more get 503 + Retry-After
  uint64_t max_body_bytes = 16 << 20;    // decoded request body, chunked or not (413)
  uint32_t max_header_bytes = 16 << 10;  // request line + headers (431)
  uint32_t max_headers = 100;            // header fields (431)
  uint32_t max_json_depth = 64;          // nesting of the JSON body (400)
  uint32_t max_json_elements = 1 << 18;  // values in the JSON body (400)
  double header_timeout_s = 10;          // to receive a request's head (408)
  double read_timeout_s = 30;            // to receive a whole request (408)
  double idle_timeout_s = 5;             // keep-alive wait for the next request
  double write_timeout_s = 30;           // a stalled response write is abandoned
  uint32_t max_tokens_limit = 0;         // per-request cap on max_tokens (400 above); 0: none
  uint32_t request_memory_mb = 1024;     // budget for requests being read and parsed (503)
  // Scale-out (docs/SCALING.md): the Inference Gateway's vllm: gauges on /metrics, vLLM's KV
  // cache events over ZeroMQ (off unless configured), and how long a SIGTERM waits for the
  // requests still running before the server stops. Read at startup only.
  bool gateway_metrics = true;
  std::optional<KvEventsConfig> kv_events;
  double drain_timeout_s = 30;
};

struct ServeVariant {
  std::string name;
  double weight = 1;  // share of primary traffic (relative to the sum)
  Config config;
};

struct ServeConfig {
  std::string origin;
  std::string log_level = "warn";
  ServeOptions serve;
  std::vector<ServeVariant> variants;  // at least one; the single-variant form is named "default"
};

// Throws ConfigError("<origin>:<line>:<col>: <key>: <problem>").
ServeConfig parse_serve_config(const std::string& text, const std::string& origin);
ServeConfig load_serve_config(const std::filesystem::path& path);

// Text that differs exactly when two configs build different variants: a reload keeps the
// running variant whose fingerprint is unchanged.
std::string fingerprint(const Config& c);

}  // namespace sy::server
