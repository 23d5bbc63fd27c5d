// The engine tests' shared workload: ten prompts, half behind one 40-token system prompt, some
// long enough (70+ tokens) to be chunked under a small token budget.
#pragma once

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

// Dynamic-scheduler parameters whose plans do not depend on timing, for tests that assert the
// workload preempts: no adaptive budget (measured step times) and no aging (past aging_ms the
// order turns FCFS, which on a slow, loaded machine plans without a preemption).
inline const Params& dynamic_timing_free() {
  static const Params p = {{"adaptive", "false"}, {"aging_ms", "1e9"}};
  return p;
}

}  // namespace sy::test
