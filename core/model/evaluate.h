// One sequence through a model, as llama.cpp's tools run it: the whole prompt in one batch with
// every position's logits, then optionally a greedy continuation one token at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "host/backend.h"
#include "model/model.h"

namespace sy::model {

struct Evaluation {
  std::vector<float> logits;    // n_prompt rows of n_vocab: row i = the logits after token i
  std::vector<int32_t> greedy;  // the tokens greedy decoding picks after the prompt
};

// Allocates its own KV cache and recurrent-state slot; the prompt must not be empty.
Evaluation evaluate(Model& model, Backend& backend, const std::vector<int32_t>& prompt,
                    uint32_t n_greedy);

}  // namespace sy::model
