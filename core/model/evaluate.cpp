#include "model/evaluate.h"

#include <algorithm>
#include <stdexcept>

#include "model/kv_cache.h"
#include "switchyard/common/error.h"

namespace sy::model {

Evaluation evaluate(Model& model, Backend& backend, const std::vector<int32_t>& prompt,
                    uint32_t n_greedy) {
  if (prompt.empty()) throw sy::Error("evaluate: the prompt is empty");
  const ModelInfo& mi = model.info();
  const uint32_t total = static_cast<uint32_t>(prompt.size()) + n_greedy;
  constexpr uint32_t kBlock = 16;
  KvCache cache(backend, mi.kv_row_widths, kBlock, (total + kBlock - 1) / kBlock);
  std::vector<int32_t> blocks;
  if (!cache.pool().allocate(cache.blocks_for(total), blocks))
    throw sy::Bug("evaluate: KV cache too small");
  model.reserve_state_slots(1);
  Evaluation ev;
  SeqInput in{prompt.data(), static_cast<uint32_t>(prompt.size()), 0, &blocks, true, 0};
  ev.logits = model.forward({in}, cache, true);
  const uint32_t V = mi.n_vocab;
  auto argmax = [V](const float* row) {
    return static_cast<int32_t>(std::max_element(row, row + V) - row);
  };
  int32_t tok = argmax(ev.logits.data() + ev.logits.size() - V);
  for (uint32_t i = 0; i < n_greedy; ++i) {
    ev.greedy.push_back(tok);
    if (i + 1 == n_greedy) break;
    SeqInput d{&tok, 1, static_cast<uint32_t>(prompt.size()) + i, &blocks, true, 0};
    const std::vector<float> row = model.forward({d}, cache);
    tok = argmax(row.data());
  }
  cache.pool().release(blocks);
  return ev;
}

}  // namespace sy::model
