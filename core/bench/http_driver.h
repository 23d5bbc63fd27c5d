// Replays a workload against a running server's OpenAI-style /v1/completions endpoint: each
// request is sent on its own connection when its arrival time comes (open loop, as vLLM's
// benchmark does), with the prompt as token ids, `stream: true` and `ignore_eos: true`; every
// streamed token is timestamped on receipt. Only client-side metrics exist for such a variant.
#pragma once

#include <string>
#include <vector>

#include "bench/driver.h"
#include "bench/events.h"
#include "bench/workload.h"

namespace sy::bench {

// The JSON body of one request (`model` omitted when empty).
std::string completion_body(const WorkItem& item, const std::string& model);

RunLog replay_http(const std::string& endpoint, const std::string& model,
                   const std::vector<WorkItem>& items, const DriverOptions& options);

}  // namespace sy::bench
