// Computed costs of a model shape, for bench-hybrid's "computed" columns: FLOPs per token and
// KV bytes per token, from the shape alone (no weights).
#pragma once

#include <cstdint>

#include "modelgen/generator.h"

namespace sy::bench {

uint32_t n_attn_layers(const model::ModelShape& s);
uint32_t n_moe_layers(const model::ModelShape& s);
// K and V rows of every attention layer, `elem_bytes` per cached value (4 for F32, 2 for F16).
uint64_t kv_bytes_per_token(const model::ModelShape& s, uint32_t elem_bytes = 4);
// KV bytes one decode step reads, averaged over `steps` steps after a `prompt_len`-token
// prompt: step i attends to prompt_len + i + 1 positions.
double kv_bytes_per_decode_step(const model::ModelShape& s, uint32_t elem_bytes,
                                uint64_t prompt_len, uint64_t steps);
// FLOPs of one token at position `pos`; with_output: the logits are computed too.
double flops_per_token(const model::ModelShape& s, uint64_t pos, bool with_output);

}  // namespace sy::bench
