#include "gemv_batch.h"

#include "kernels/packed_layouts.h"

#include <algorithm>

namespace sy::cpu_onednn {
namespace {

struct Bytes {
  const char *begin, *end;
};

// GEMV inputs and outputs are F32.
Bytes bytes_of(const void* data, int64_t n) {
  const char* p = static_cast<const char*>(data);
  return {p, p + n * (int64_t)sizeof(float)};
}
Bytes bytes_of(const plugin::Tensor& t) {
  return bytes_of(t.data, t.nelements());
}

bool overlap(const char* b0, const char* e0, const char* b1, const char* e1) {
  return b0 < e1 && b1 < e0;
}

}  // namespace

bool GemvBatch::can_join(const plugin::Tensor& x, const plugin::Tensor& y) const {
  if (size_ == kMaxItems) return false;
  const Bytes xb = bytes_of(x), yb = bytes_of(y);
  for (int i = 0; i < size_; ++i) {
    const Item& it = items_[i];
    const Bytes in = bytes_of(it.key.x, it.key.m * it.key.k);
    if (overlap(xb.begin, xb.end, it.y_begin, it.y_end) ||
        overlap(yb.begin, yb.end, it.y_begin, it.y_end) ||
        overlap(yb.begin, yb.end, in.begin, in.end))
      return false;
  }
  return true;
}

bool GemvBatch::share_acts(const ActKey& key, kernels::GemvArgs& a) const {
  for (int i = 0; i < size_; ++i) {
    if (!(items_[i].key == key)) continue;
    const kernels::GemvArgs& b = items_[i].a;
    a.q = b.q, a.q8 = b.q8, a.d = b.d, a.s = b.s, a.bias8 = b.bias8;
    a.block_starts = b.block_starts;
    return true;
  }
  return false;
}

void GemvBatch::add(kernels::GemvFn fn, const kernels::GemvArgs& a, int64_t n, const ActKey& key,
                    const plugin::Tensor& y) {
  const Bytes yb = bytes_of(y);
  items_[size_++] = {fn, a, n, key, yb.begin, yb.end};
}

void GemvBatch::run(ThreadPool& pool, int64_t task_bytes) {
  if (size_ == 0) return;
  std::array<int64_t, kMaxItems + 1> first{};  // item i's rows are [first[i], first[i + 1])
  int64_t bytes = 0;
  for (int i = 0; i < size_; ++i) {
    first[i + 1] = first[i] + items_[i].n;
    bytes += items_[i].n * items_[i].a.row_bytes;
  }
  const int64_t rows = first[size_];
  const int64_t grain = std::max<int64_t>(1, task_bytes * rows / std::max<int64_t>(1, bytes));
  // Whole groups of packed weights per chunk where the items' row offsets allow it (a packed
  // kernel computes a split group whole); plain batches keep their row-exact chunks.
  bool packed = false, aligned = true;
  for (int i = 0; i < size_; ++i) {
    packed = packed || items_[i].a.packed_rows > 0;
    aligned = aligned && first[i] % kernels::kPackRows == 0;
  }
  const int64_t align = packed && aligned ? kernels::kPackRows : 1;
  pool.parallel_shares(
      rows, grain,
      [&](int64_t j0, int64_t j1, int) {
        for (int i = 0; i < size_; ++i) {
          const int64_t b = std::max(j0, first[i]), e = std::min(j1, first[i + 1]);
          if (b < e) items_[i].fn(items_[i].a, b - first[i], e - first[i]);
        }
      },
      align);
  size_ = 0;
}

}  // namespace sy::cpu_onednn
