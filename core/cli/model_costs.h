// Costs of a model shape per token, computed (not measured), shared by the bench commands.
#pragma once

#include <cstdint>

#include "model/generator.h"

namespace sy::cli {

uint32_t n_attn_layers(const model::ModelShape& s);
// K and V rows of every attention layer, `elem_bytes` per cached value (4 for F32, 2 for F16).
uint64_t kv_bytes_per_token(const model::ModelShape& s, uint32_t elem_bytes = 4);
// FLOPs of one token at position `pos` (it attends to pos + 1 keys): 2 per multiply-add of
// every active matrix (the embedding is a lookup; a tied output counts once), attention
// 4 * n_embd per key and layer (scores and the weighted sum), the scan ~6 per (channel, state)
// plus the conv, per recurrent layer. Norms and element-wise ops are left out (under 1%).
double flops_per_token(const model::ModelShape& s, uint64_t pos, bool with_output);

}  // namespace sy::cli
