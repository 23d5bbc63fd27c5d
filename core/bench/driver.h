// Replays a workload against one in-process engine in real time: requests are submitted when
// their arrival time comes, the engine steps while it has work, and the loop sleeps until the
// next arrival or the end of the scheduler's wait window when it has none.
#pragma once

#include <functional>
#include <vector>

#include "bench/events.h"
#include "bench/workload.h"
#include "engine/variant.h"

namespace sy::bench {

struct DriverOptions {
  double timeout_s = 300;        // requests unfinished by then fail with "timed out"
  uint32_t warmup_requests = 2;  // run first, not recorded: first-call costs (primitive creation)
  bool ignore_eos = true;        // outputs as long as the workload says, like vLLM's --ignore-eos
  std::function<void(size_t finished, size_t total)> on_progress;
};

RunLog replay(engine::Variant& variant, const std::vector<WorkItem>& items,
              const DriverOptions& options);

}  // namespace sy::bench
