// /v1/completions and /v1/chat/completions: parse and check the request, route it by its id,
// tokenize with the chosen variant's vocabulary, submit (retrying on a variant that started
// draining in a swap), optionally start a shadow run, then answer whole or as server-sent
// events. A client that disconnects cancels its request, which frees its KV blocks.
#pragma once

#include <atomic>
#include <string>

#include "server/router.h"
#include "server/serve_metrics.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sy::server {

class CompletionService {
 public:
  CompletionService(Router& router, ServeMetrics& metrics, std::string model_name);
  void handle(const httplib::Request& req, httplib::Response& res, bool chat);

 private:
  Router& router_;
  ServeMetrics& metrics_;
  std::string model_name_;
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace sy::server
