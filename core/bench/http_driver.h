// Replays a workload against a running server's OpenAI-style /v1/completions endpoint: each
// request is sent on its own connection when its arrival time comes (open loop, as vLLM's
// benchmark does), with the prompt as token ids, `stream: true` and `ignore_eos: true`; every
// streamed token is timestamped on receipt. Only client-side metrics exist for such a variant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/driver.h"
#include "bench/events.h"
#include "bench/http_client.h"
#include "bench/workload.h"

namespace sy::bench {

// The JSON body of one request (`model` omitted when empty): the prompt as token ids,
// temperature 0, ignore_eos, streamed.
std::string completion_body(const WorkItem& item, const std::string& model);
// The same with a text prompt, streamed or not (`switchyard bench-serve`).
std::string completion_body(const std::string& prompt, uint32_t max_tokens, bool stream);

// What one completion request got back.
struct CompletionAnswer {
  int status = 0;                 // 0: no HTTP answer (error says why)
  std::vector<int64_t> token_ns;  // streamed: when each token arrived (host_api's now_ns)
  uint64_t tokens = 0;            // tokens in the answer
  std::string error;              // empty: a complete 200 answer
};

// Sends one completion and reads the answer: a stream of SSE chunks that must end with [DONE]
// (each token timestamped on receipt) or, not streamed, one JSON body whose
// usage.completion_tokens counts the tokens. Both load generators send through this: the
// workload replay below and bench-serve's closed loop (bench/load_driver.h).
CompletionAnswer post_completion(HttpClient& client, const std::string& path,
                                 const std::string& body, bool stream);

RunLog replay_http(const std::string& endpoint, const std::string& model,
                   const std::vector<WorkItem>& items, const DriverOptions& options);

}  // namespace sy::bench
