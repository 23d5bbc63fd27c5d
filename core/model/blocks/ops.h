// The op sequences every block shares, written once: a projection with its epilogue, RoPE,
// attention over the paged KV cache, element-wise helpers, and the output head over the rows
// that want logits.
#pragma once

#include <string>
#include <vector>

#include "host/backend.h"
#include "model/flat_batch.h"
#include "model/kv_cache.h"
#include "model/model_desc.h"
#include "model/tensor_table.h"

namespace sy::model {

using sy::OpNeeds;  // switchyard/common/backend_ops.h

// Throws naming the backend and every op the model of `arch` needs that the backend lacks.
void require_ops(const Backend& backend, const std::string& arch, const OpNeeds& needs);

// y = W x, then the projection's bias and scale (in place on y).
void apply_linear(Backend& backend, const Linear& l, const sy_tensor& x, const sy_tensor& y);

// RoPE on x3 ({head_dim, n_head, T}) at positions pos: the 1.0 op for a plain rotation, else
// rope_ext with the frequency factors (or null) and YaRN settings.
void apply_rope(Backend& backend, const RopeParams& rope, const sy_tensor* freq_factors,
                const sy_tensor& x3, const int32_t* pos);

// Stores k and v ({D * n_kv_head, T}; nothing when k is empty) at the batch's KV slots of
// `layer`, then attends q3
// ({D, H, T}) over each sequence's cached positions (the last `window` ones when nonzero) into
// out3 ({D, H, T}); sinks and softcap as sy_attention_args has them.
void paged_attention(Backend& backend, const FlatBatch& bt, KvCache& cache, uint32_t layer,
                     const sy_tensor& q3, const sy_tensor& k, const sy_tensor& v,
                     const sy_tensor& out3, uint32_t n_kv_head, float scale, uint32_t window,
                     const sy_tensor* sinks = nullptr, float softcap = 0.0f);

// y = f(x) for a sy_unary_kind.
void unary(Backend& backend, uint32_t kind, const sy_tensor& x, const sy_tensor& y);
// y = x * scale (a plain multiplier: Granite's embedding and residual scales).
void scale(Backend& backend, const sy_tensor& x, float s, const sy_tensor& y);
// Row-wise norm of x{n, rows} (sy_norm_kind) times w{n, groups} (row r: column r mod groups), or
// no weight when w is null.
void norm(Backend& backend, uint32_t kind, const sy_tensor& x, const sy_tensor* w, float eps,
          const sy_tensor& y);

// The output norm and vocab projection of the rows of x that want logits, gathered into `sel`
// ({E, n_out}) and projected into `logits` ({n_vocab, n_out}, in logits_buf); plus output_bias
// when not null; divided by logit_scale when nonzero; soft-capped to (-softcap, softcap) when
// nonzero; synchronizes and returns them row by row.
std::vector<float> output_logits(Backend& backend, const FlatBatch& bt, const sy_tensor& x,
                                 const sy_tensor& out_norm, float rms_eps, const sy_tensor& output,
                                 const sy_tensor* output_bias, const sy_tensor& sel,
                                 const sy_tensor& logits, Buffer& logits_buf, float logit_scale,
                                 float softcap);

}  // namespace sy::model
