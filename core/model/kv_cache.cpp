#include "model/kv_cache.h"

namespace sy::model {

BlockPool::BlockPool(uint32_t n_blocks) : total_(n_blocks) {
  free_.reserve(n_blocks);
  for (uint32_t i = n_blocks; i-- > 0;) free_.push_back(static_cast<int32_t>(i));
}

bool BlockPool::allocate(uint32_t n, std::vector<int32_t>& into) {
  if (n > free_.size()) return false;
  for (uint32_t i = 0; i < n; ++i) {
    into.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void BlockPool::release(std::vector<int32_t>& blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) free_.push_back(*it);
  blocks.clear();
}

KvCache::KvCache(Backend& backend, uint32_t n_layer, uint32_t row_width, uint32_t block_size,
                 uint32_t n_blocks)
    : row_width_(row_width), block_size_(block_size), pool_(n_blocks) {
  const uint64_t slots = static_cast<uint64_t>(block_size) * n_blocks;
  const uint64_t layer_bytes = slots * row_width * sizeof(float);
  kbuf_ = backend.alloc(layer_bytes * n_layer);
  vbuf_ = backend.alloc(layer_bytes * n_layer);
  bytes_ = 2 * layer_bytes * n_layer;
  for (uint32_t l = 0; l < n_layer; ++l) {
    k_.push_back(make_tensor(*kbuf_, SY_DTYPE_F32, {row_width, (int64_t)slots}, l * layer_bytes));
    v_.push_back(make_tensor(*vbuf_, SY_DTYPE_F32, {row_width, (int64_t)slots}, l * layer_bytes));
  }
}

}  // namespace sy::model
