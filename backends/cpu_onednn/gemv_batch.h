// Decode GEMVs held back until something reads their outputs, so that the projections of one
// input (q, k and v; gate and up) run as one pool job: one wake-up of the workers and one wait
// for the last of them per batch instead of per weight.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "switchyard/sdk/backend.h"
#include "thread_pool.h"

namespace sy::cpu_onednn {

// One input's activations in a GEMV format (kernels.h), kept until its batch has run.
struct ActBuffers {
  std::vector<int16_t> q;
  std::vector<int8_t> q8;
  std::vector<float> d, s;
  std::vector<int32_t> bias8, block_starts;
};

// What an input's prepared activations depend on: GEMVs of the same key share them.
struct ActKey {
  const void* x = nullptr;
  int64_t m = 0, k = 0;
  kernels::ActFormat act = kernels::ActFormat::f32;
  int bias8 = 0;
  int block_bias = 0;  // a packed weight's block starts (GemvEntry::packed_bias)
  bool operator==(const ActKey&) const = default;
};

class GemvBatch {
 public:
  static constexpr int kMaxItems = 8;

  // Whether a GEMV from x into y may join: a slot is free, x reads no queued output (it is not
  // written yet) and y touches no queued input or output.
  bool can_join(const plugin::Tensor& x, const plugin::Tensor& y) const;
  // Fills the activation fields of `a` from a queued GEMV of the same key; false when none has
  // them (the caller prepares them in next_acts()).
  bool share_acts(const ActKey& key, kernels::GemvArgs& a) const;
  // The next item's own activation buffers (valid until the batch runs).
  ActBuffers& next_acts() { return acts_[size_]; }
  // Queues fn over the n weight rows of `a` (can_join must have said yes).
  void add(kernels::GemvFn fn, const kernels::GemvArgs& a, int64_t n, const ActKey& key,
           const plugin::Tensor& y);
  // Runs every queued GEMV as one job over their rows, each thread streaming one contiguous
  // share (ThreadPool::parallel_shares) of at least task_bytes a chunk; then empties the batch.
  void run(ThreadPool& pool, int64_t task_bytes);

 private:
  struct Item {
    kernels::GemvFn fn;
    kernels::GemvArgs a;
    int64_t n;
    ActKey key;                   // key.x, m and k: the input it reads
    const char *y_begin, *y_end;  // the bytes it writes
  };
  std::array<Item, kMaxItems> items_{};
  std::array<ActBuffers, kMaxItems> acts_;
  int size_ = 0;
};

}  // namespace sy::cpu_onednn
