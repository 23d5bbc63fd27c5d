// The op sequences of the decoder's layers, written once: projections with their epilogue,
// attention over the paged KV cache, the SwiGLU FFN, and the output head over the rows that want
// logits.
#pragma once

#include <string>
#include <vector>

#include "host/backend.h"
#include "model/decoder_hparams.h"
#include "model/decoder_weights.h"
#include "model/flat_batch.h"
#include "model/kv_cache.h"

namespace sy::model {

// The optional ops a model needs beyond the 1.0 table.
using sy::OpNeeds;  // switchyard/common/backend_ops.h

// Throws naming the backend and every op the model of `arch` needs that the backend lacks.
void require_ops(const Backend& backend, const std::string& arch, const OpNeeds& needs);

// y = W x, then the projection's bias and scale (in place on y).
void apply_linear(Backend& backend, const Linear& l, const sy_tensor& x, const sy_tensor& y);

// RoPE on x3 ({head_dim, n_head, T}) at positions pos: the 1.0 op for a plain rotation, else
// rope_ext with the frequency factors (or null) and YaRN settings.
void apply_rope(Backend& backend, const RopeParams& rope, const sy_tensor* freq_factors,
                const sy_tensor& x3, const int32_t* pos);

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
void swiglu_ffn(Backend& backend, const sy_tensor& xn, const Linear& w_gate, const Linear& w_up,
                const Linear& w_down, const sy_tensor& gate, const sy_tensor& up,
                const sy_tensor& out);

// The output norm and vocab projection of the rows of x that want logits, gathered into `sel`
// ({E, n_out}) and projected into `logits` ({n_vocab, n_out}, at logits_offset of `act`);
// synchronizes and returns them row by row.
std::vector<float> output_logits(Backend& backend, const FlatBatch& bt, const sy_tensor& x,
                                 const sy_tensor& out_norm, float rms_eps, const sy_tensor& output,
                                 const sy_tensor& sel, const sy_tensor& logits, Buffer& act,
                                 uint64_t logits_offset);

}  // namespace sy::model
