// Out-of-process scheduling: the plugin runs in a child (switchyard-plugin-runner) and a proxy
// forwards plan calls to it, so a plugin that crashes or hangs cannot take the engine down.
// A failed call returns an error, so the engine runs its fallback plan for that step, logs it
// and counts it; the child is restarted on the next call, a bounded number of times.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "host/scheduler.h"

namespace sy {

struct ProcessOptions {
  std::filesystem::path runner;       // empty: default_runner_path()
  int64_t start_timeout_ms = 10'000;  // loading the plugin and creating its scheduler
  int64_t plan_timeout_ms = 2'000;    // one plan call, cost-model round trips included
  uint32_t max_restarts = 3;          // then every plan fails and the host plans alone
};

// $SWITCHYARD_PLUGIN_RUNNER, else switchyard-plugin-runner next to the running executable.
std::filesystem::path default_runner_path();

// Starts the child, which loads the plugin at `plugin_path` with every check an in-process load
// makes, and creates its scheduler. Throws PluginError with the same message an in-process load
// or create would give, or why the child could not start.
// Host counters: scheduler_process_failures (crash, timeout, bad reply) and
// scheduler_process_restarts.
std::unique_ptr<Scheduler> make_process_scheduler(const std::filesystem::path& plugin_path,
                                                  const Params& params,
                                                  const ProcessOptions& options = {});

}  // namespace sy
