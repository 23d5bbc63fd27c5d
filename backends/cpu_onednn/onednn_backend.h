// The oneDNN CPU backend: matmul dispatch per weight dtype and batch size, plus vectorised ops,
// all run on one persistent thread pool.
#pragma once

#include <vector>

#include "cpu_path.h"
#include "gemm_cache.h"
#include "gemv_batch.h"
#include "kernels/kernels.h"
#include "onednn_factory.h"
#include "switchyard/sdk/backend.h"
#include "thread_pool.h"

namespace sy::cpu_onednn {

using plugin::AttentionOp;
using plugin::KvStoreOp;
using plugin::Tensor;

class OnednnBackend final : public plugin::Backend {
 public:
  explicit OnednnBackend(const BackendOptions& opt);

  SY_BACKEND_OP_OVERRIDES;
  SY_BACKEND_OP_OVERRIDES_1_5;
  SY_BACKEND_OP_OVERRIDES_1_6;
  void flush() override;  // runs the queued GEMVs
  // Matrices of a dtype with a packed layout (Q4_K, Q6_K, Q8_0, Q4_0, IQ4_NL, MXFP4) and at least
  // one whole group, on a path with their packed kernel (8-bit activations):
  // kernels/packed_layouts.h; everything else stays plain.
  uint64_t packed_size(const Tensor& w) override;
  void pack_weight(const Tensor& w, void* dst) override;

 private:
  // Runs body(i) for i in [0, n): on the pool when `parallel` (the op is large enough to pay
  // for it), else inline.
  template <class F>
  void for_each(int64_t n, bool parallel, F&& body) {
    pool_.parallel_for(n, parallel ? 1 : n, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) body(i);
    });
  }
  // As for_each, for bodies with per-thread scratch: body(i, thread).
  template <class F>
  void for_each_thread(int64_t n, bool parallel, F&& body) {
    if (parallel) return pool_.run(n, [&](int64_t i, int thread) { body(i, thread); });
    for (int64_t i = 0; i < n; ++i) body(i, 0);
  }
  // Rotates every head of every token of x by its token's cos/sin table ({2 * half} each).
  void rotate(const Tensor& x, const float* cs, int64_t half, bool neox);
  int64_t gemv_max_m(const Tensor& w) const;
  void queue_gemv(const kernels::GemvEntry& g, const Tensor& x, const Tensor& w, const Tensor& y);
  // oneDNN GEMM over column slices of W, one slice per pool task (F16/BF16/Q8_0: each task
  // dequantises its slice into its thread's panel first).
  void gemm(const Tensor& x, const Tensor& w, const Tensor& y);

  const int threads_;
  const int gemv_max_m_;
  const int act_bits_;
  const bool repack_;
  const kernels::KernelTable& kernels_;
  ThreadPool pool_;
  std::vector<GemmCache> gemm_;             // per pool thread: single-threaded primitives
  std::vector<std::vector<float>> panels_;  // per pool thread: a dequantised slice of W
  GemvBatch gemvs_;                         // decode GEMVs not run yet
  struct AttnItem {
    uint32_t seq;
    int64_t t0, count;  // tokens [t0, t0 + count) of the batch
    int64_t kv_head;    // a prefill tile's KV head
    int64_t k0, k1;     // a one-token item's span of keys (count == 1)
    int64_t part;       // its partial result in attn_parts_, or -1: the span is every key
  };
  std::vector<AttnItem> attn_items_;
  std::vector<AttnItem> attn_one_token_;  // one-token queries over all their keys, to split
  std::vector<float> attn_parts_;         // per split one-token span: out (heads x d), then m and l
  std::vector<float> attn_scratch_;       // per pool thread: an item's tiles
  std::vector<int32_t> attn_valid_;       // per pool thread: rows' n_valid, then n_skip, in a tile
  std::vector<float> scratch_;            // rope tables
  std::vector<float> rec_scratch_;        // per pool thread: a token's normalised q and k (GDN)
  std::vector<float> moe_x_, moe_y_;      // one expert's gathered input rows and their outputs
  std::vector<int64_t> moe_rows_;         // (token, slot) pairs bucketed by expert
};

}  // namespace sy::cpu_onednn
