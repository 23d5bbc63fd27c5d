// The op sequences llama and jamba share, written once: attention over the paged KV cache, the
// SwiGLU FFN, and the output head over the rows that want logits.
#pragma once

#include <string>
#include <vector>

#include "host/backend.h"
#include "model/flat_batch.h"
#include "model/kv_cache.h"

namespace sy::model {

// Throws naming the backend and every op the model of `arch` needs that the backend lacks.
void require_ops(const Backend& backend, const std::string& arch, bool recurrent, bool moe);

// Carves one activation buffer into 64-byte aligned float arrays.
class ScratchLayout {
 public:
  uint64_t carve(uint64_t floats) {
    const uint64_t at = size_;
    size_ += (floats * 4 + 63) / 64 * 64;
    return at;
  }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
};

// Stores k and v ({D * n_kv_head, T}) at the batch's KV slots of `layer`, then attends q3
// ({D, H, T}) over each sequence's cached positions into out3 ({D, H, T}).
void paged_attention(Backend& backend, const FlatBatch& bt, KvCache& cache, uint32_t layer,
                     const sy_tensor& q3, const sy_tensor& k, const sy_tensor& v,
                     const sy_tensor& out3, uint32_t n_kv_head, float scale);

// out = down(silu(gate(xn)) * up(xn)); `gate` and `up` are {n_ff, T} scratch.
void swiglu_ffn(Backend& backend, const sy_tensor& xn, const sy_tensor& w_gate,
                const sy_tensor& w_up, const sy_tensor& w_down, const sy_tensor& gate,
                const sy_tensor& up, const sy_tensor& out);

// The output norm and vocab projection of the rows of x that want logits, gathered into `sel`
// ({E, n_out}) and projected into `logits` ({n_vocab, n_out}, at logits_offset of `act`);
// synchronizes and returns them row by row.
std::vector<float> output_logits(Backend& backend, const FlatBatch& bt, const sy_tensor& x,
                                 const sy_tensor& out_norm, float rms_eps, const sy_tensor& output,
                                 const sy_tensor& sel, const sy_tensor& logits, Buffer& act,
                                 uint64_t logits_offset);

}  // namespace sy::model
