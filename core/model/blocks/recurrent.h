// What the recurrent blocks (Mamba-1, Mamba-2, gated delta nets, short convolutions) share: the
// causal conv over the pass's calls, each call's columns, and the state copies into prefix-cache
// snapshot slots after each call (model/ssm_calls.h).
#pragma once

#include <cstdint>
#include <functional>

#include "model/layer_pass.h"

namespace sy::model {

// y = conv_K(x) (+ bias, then silu when asked) for recurrent layer r, per call; conv state
// copied to the call's snapshot slots after it. x and y are {channels, T}.
void conv_calls(LayerPass& p, uint32_t r, const sy_tensor& x, const sy_tensor* weight,
                const sy_tensor* bias, bool silu, const sy_tensor& y);

// Runs `scan(call)` for each call of the pass, then copies recurrent layer r's scan state to the
// call's snapshot slots.
void scan_calls(LayerPass& p, uint32_t r, const std::function<void(const SsmCall&)>& scan);

}  // namespace sy::model
