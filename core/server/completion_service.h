// /v1/completions and /v1/chat/completions: parse and check the request (within the JSON
// limits), route it by its id, tokenize with the chosen variant's vocabulary (only as much text
// as could fit its context), submit one engine request per choice (retrying on a variant that
// started draining in a swap), optionally start a shadow run, then answer whole or as
// server-sent events. Stop strings and stop tokens end a choice on the engine thread, at the
// token that completed them. A client that disconnects cancels its choices and their shadow,
// which frees their KV blocks.
#pragma once

#include <atomic>
#include <string>

#include "server/json_body.h"
#include "server/router.h"
#include "server/serve_metrics.h"

namespace sy::server {

namespace http {
struct Request;
struct Response;
}  // namespace http

struct CompletionLimits {
  JsonLimits json;
  uint32_t max_tokens = 0;  // per-request cap on max_tokens ([serve] max_tokens_limit); 0: none
  bool smaller_priority_first = false;  // [serve] priority_order = "vllm": the request's
                                        // priority is negated for the engine
};

class CompletionService {
 public:
  CompletionService(Router& router, ServeMetrics& metrics, std::string model_name,
                    CompletionLimits limits = {});
  void handle(const http::Request& req, http::Response& res, bool chat);
  // The server drains (SIGTERM): new requests get 503 `draining` at once, not after retrying.
  void begin_drain() { draining_ = true; }

 private:
  Router& router_;
  ServeMetrics& metrics_;
  std::string model_name_;
  CompletionLimits limits_;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<bool> draining_{false};
};

}  // namespace sy::server
