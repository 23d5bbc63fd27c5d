// Computed costs of a model from its description alone (no weights): FLOPs per token, KV and
// recurrent-state bytes, for bench-hybrid's and bench-backend's "computed" columns. A ModelDesc
// comes from a file's keys (model::read_model_desc) or a generator shape.
#pragma once

#include <cstdint>

#include "model/model_desc.h"
#include "modelgen/generator.h"

namespace sy::bench {

// K and V rows of every attention layer, `elem_bytes` per cached value (4 for F32, 2 for F16).
uint64_t kv_bytes_per_token(const model::ModelDesc& d, uint32_t elem_bytes = 4);
// KV bytes one decode step reads, averaged over `steps` steps after a `prompt_len`-token
// prompt: step i attends to prompt_len + i + 1 positions (at most the window where one is set).
double kv_bytes_per_decode_step(const model::ModelDesc& d, uint32_t elem_bytes, uint64_t prompt_len,
                                uint64_t steps);
// KV bytes of one sequence's `positions` tokens that attention reads: every attention layer's,
// a sliding-window layer's at most its window.
double kv_bytes_at(const model::ModelDesc& d, uint32_t elem_bytes, uint64_t positions);
// The KV bytes one sequence of `positions` tokens holds: kv_bytes_at less the layers that read
// an earlier layer's cache (Gemma 4's shared KV).
double kv_bytes_held(const model::ModelDesc& d, uint32_t elem_bytes, uint64_t positions);
// Recurrent state of one sequence (conv and scan, F32) over all recurrent layers.
uint64_t state_bytes_per_seq(const model::ModelDesc& d);
// FLOPs of one token at position `pos`; with_output: the logits are computed too.
double flops_per_token(const model::ModelDesc& d, uint64_t pos, bool with_output);
// Parameters of the file the description stands for: all, and those one token uses.
uint64_t params(const model::ModelDesc& d);
uint64_t active_params(const model::ModelDesc& d);

// The same for a generator shape (its description).
uint32_t n_attn_layers(const model::ModelShape& s);
uint32_t n_moe_layers(const model::ModelShape& s);
uint64_t kv_bytes_per_token(const model::ModelShape& s, uint32_t elem_bytes = 4);
double kv_bytes_per_decode_step(const model::ModelShape& s, uint32_t elem_bytes,
                                uint64_t prompt_len, uint64_t steps);
double flops_per_token(const model::ModelShape& s, uint64_t pos, bool with_output);

}  // namespace sy::bench
