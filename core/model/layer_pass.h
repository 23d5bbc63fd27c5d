// What one layer of a forward pass works with: the backend, the model's description and weights,
// the flattened batch (with how its recurrent layers' calls are split for prefix-cache
// snapshots), the KV cache, the recurrent state, the MoE FFN, and a scratch arena for the
// layer's activations. Blocks (model/blocks/) take it; each family's layer() composes them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"
#include "model/flat_batch.h"
#include "model/kv_cache.h"
#include "model/model_desc.h"
#include "model/recurrent_state.h"
#include "model/ssm_calls.h"

namespace sy::model {

class MoeFfn;
struct TokenGroup;
struct ModelWeights;

struct PassBatch : FlatBatch {
  std::vector<int32_t> state_slots;  // one per sequence (models with recurrent layers)
  std::vector<SsmCall> ssm;          // how the recurrent calls run (split at snapshot points)
};

// A bump allocator over one activation buffer: a layer's temporaries live until reset().
class Scratch {
 public:
  // Grows the buffer to `floats` (dropping its contents) when it is smaller.
  void reserve(Backend& backend, uint64_t floats);
  uint64_t floats() const { return cap_; }
  // An F32 tensor of shape ne at the next 64-byte aligned place; throws std::logic_error when
  // the arena is full (a block's scratch_floats() is too small).
  sy_tensor f32(std::initializer_list<int64_t> ne);
  void reset() { used_ = 0; }
  uint64_t bytes() const { return buf_ ? buf_->size() : 0; }

 private:
  std::unique_ptr<Buffer> buf_;
  uint64_t cap_ = 0, used_ = 0;  // floats
};

struct LayerPass {
  Backend& b;
  const ModelDesc& d;
  const ModelWeights& w;
  const PassBatch& bt;
  KvCache& cache;
  RecurrentState& state;
  MoeFfn* moe;
  const std::vector<TokenGroup>& groups;
  Scratch& scratch;
  sy_tensor x, xn, mix;  // the residual stream, its normed copy, a mixer's output: {E, T}
  sy_tensor q_temp{};    // {1, T}: each token's attention temperature (attn_temp_scale), or none
  // {P, T * n_layer}: Gemma 4's per-layer inputs, layer by layer ({P, T} each), or none.
  sy_tensor per_layer{};
  int64_t n_tokens() const { return x.ne[1]; }
};

// An F32 view with another shape over the same bytes (the element counts must agree).
sy_tensor view(const sy_tensor& t, std::initializer_list<int64_t> ne);

}  // namespace sy::model
