// The engine tests' shared workload: ten prompts, half behind one 40-token system prompt, some
// long enough (70+ tokens) to be chunked under a small token budget.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tiny_model.h"

namespace sy::test {

inline std::vector<std::vector<int32_t>> chunked_prefix_workload() {
  const auto system = sample_tokens(40, 259, 3);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 10; ++i) {
    std::vector<int32_t> p = i % 2 ? std::vector<int32_t>{} : system;
    const auto tail = sample_tokens(i % 3 == 0 ? 70 : 6 + 3 * i, 259, 10 + i);
    p.insert(p.end(), tail.begin(), tail.end());
    prompts.push_back(p);
  }
  return prompts;
}

// The original scheduler's greedy tokens for chunked_prefix_workload on a preset's F32 file
// (max_new 12, no prefix caching, every layer keeping every position): what the engine's
// optional features must reproduce. Computed once per preset and process.
inline const std::vector<std::vector<int32_t>>& original_tokens(const std::string& preset) {
  static std::map<std::string, std::vector<std::vector<int32_t>>> out;
  auto it = out.find(preset);
  if (it != out.end()) return it->second;
  EngineRun run;
  run.model = preset_model_file(preset);
  run.params = {{"max_batch", "4"}, {"wait_window_ms", "0"}};
  run.max_new = 12;
  return out[preset] = run.run(chunked_prefix_workload());
}

// Dynamic-scheduler parameters whose plans do not depend on timing, for tests that assert the
// workload preempts: no adaptive budget (measured step times) and no aging (past aging_ms the
// order turns FCFS, which on a slow, loaded machine plans without a preemption).
inline const Params& dynamic_timing_free() {
  static const Params p = {{"adaptive", "false"}, {"aging_ms", "1e9"}};
  return p;
}

}  // namespace sy::test
