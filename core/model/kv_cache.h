// Paged KV cache: per layer one K and one V tensor of F32 rows {head_dim * n_kv_head, slots},
// carved into fixed-size blocks handed out by a free list. A sequence owns a block table; slot
// p of a sequence lives at block_table[p / block_size] * block_size + p % block_size.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"

namespace sy::model {

class BlockPool {
 public:
  explicit BlockPool(uint32_t n_blocks);
  uint32_t total() const { return total_; }
  uint32_t free_count() const { return static_cast<uint32_t>(free_.size()); }
  // Returns false (and takes nothing) when fewer than n blocks are free.
  bool allocate(uint32_t n, std::vector<int32_t>& into);
  void release(std::vector<int32_t>& blocks);  // clears `blocks`

 private:
  uint32_t total_;
  std::vector<int32_t> free_;  // LIFO: recently freed blocks are reused first (warm in cache)
};

class KvCache {
 public:
  KvCache(Backend& backend, uint32_t n_layer, uint32_t row_width, uint32_t block_size,
          uint32_t n_blocks);
  uint32_t block_size() const { return block_size_; }
  uint32_t row_width() const { return row_width_; }
  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  const sy_tensor& k(uint32_t layer) const { return k_[layer]; }
  const sy_tensor& v(uint32_t layer) const { return v_[layer]; }
  uint64_t bytes() const { return bytes_; }
  uint32_t blocks_for(uint32_t n_tokens) const { return (n_tokens + block_size_ - 1) / block_size_; }

 private:
  uint32_t row_width_, block_size_;
  BlockPool pool_;
  std::unique_ptr<Buffer> kbuf_, vbuf_;
  std::vector<sy_tensor> k_, v_;
  uint64_t bytes_ = 0;
};

}  // namespace sy::model
