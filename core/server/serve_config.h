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
  std::string model_name = "switchyard";  // what /v1/models lists and the model_name label
  std::string baseline;  // the variant a rollback sends all traffic to (default: first)
  std::optional<ShadowSpec> shadow;
  uint32_t http_threads = 64;  // concurrent connections being served
  uint32_t watch_ms = 500;     // config file poll interval; 0: no watching
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
