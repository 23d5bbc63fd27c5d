// Paged KV cache: per attention layer one K and one V tensor of F32 (or F16) rows
// {head_dim * n_kv_head, slots}, carved into fixed-size blocks. A sequence owns a block table;
// position p lives at block_table[p / block_size] * block_size + p % block_size.
//
// Prefix caching: a full block is keyed by a hash chain of its tokens (the hash of the previous
// block and this block's tokens), so equal prefixes map to equal keys. Blocks are reference
// counted and shared copy-free; a released block that carries a key stays reusable until it is
// evicted, least recently released first, when no plain free block is left.
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/backend.h"

namespace sy::model {

using BlockHash = uint64_t;

// Hash chain of the full blocks of `tokens` (the last partial block is not keyed).
std::vector<BlockHash> block_hashes(const int32_t* tokens, size_t n, uint32_t block_size,
                                    BlockHash seed = 0);

// Told when the set of cached (keyed) blocks changes, on the thread that changes it: a block
// is keyed by publish(), evicted when an allocation reuses it, and all keyed blocks go when the
// pool is destroyed. Feeds the KV-event stream routers consume (server/kv_event_publisher.h).
class BlockObserver {
 public:
  virtual ~BlockObserver() = default;
  // `parent`: the hash of the previous block of the chain (0: the first block); `tokens`: the
  // block's token ids (empty when the caller did not pass them).
  virtual void block_stored(BlockHash hash, BlockHash parent, std::span<const int32_t> tokens) = 0;
  virtual void blocks_removed(std::span<const BlockHash> hashes) = 0;
};

class BlockPool {
 public:
  explicit BlockPool(uint32_t n_blocks);
  ~BlockPool();  // reports every still-keyed block as removed to the observer
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  uint32_t total() const { return total_; }
  // Blocks an allocation can take: plain free ones plus evictable cached ones.
  uint32_t free_count() const { return static_cast<uint32_t>(free_.size() + lru_.size()); }
  uint32_t cached_free_count() const { return static_cast<uint32_t>(lru_.size()); }
  // Returns false (and takes nothing) when fewer than n blocks are available.
  bool allocate(uint32_t n, std::vector<int32_t>& into);
  // Drops one reference to each block and clears `blocks`.
  void release(std::vector<int32_t>& blocks);

  // Number of leading hashes that are cached (no side effects).
  uint32_t match(const std::vector<BlockHash>& hashes, uint32_t max_blocks) const;
  // Takes a reference to the first n cached blocks of the chain and appends them to `into`.
  void acquire_cached(const std::vector<BlockHash>& hashes, uint32_t n, std::vector<int32_t>& into);
  // Keys a full block the caller has just computed, unless that key already has a block.
  // `parent` and `tokens` only reach the observer.
  void publish(int32_t block, BlockHash hash, BlockHash parent = 0,
               std::span<const int32_t> tokens = {});
  // At most one; null detaches. Must outlive the pool or be detached first.
  void set_observer(BlockObserver* o) { observer_ = o; }
  bool observed() const { return observer_ != nullptr; }
  // The hashes of every keyed block (referenced or evictable), in no order.
  std::vector<BlockHash> cached_hashes() const;

  uint32_t ref_count(int32_t block) const { return ref_[block]; }
  // Of the first n cached blocks of the chain, how many nobody references (acquiring them takes
  // them out of the evictable set).
  uint32_t unreferenced_among(const std::vector<BlockHash>& hashes, uint32_t n) const;
  uint64_t evictions() const { return evictions_; }

 private:
  int32_t take_one();
  uint32_t total_;
  std::vector<int32_t> free_;  // unkeyed, unreferenced; LIFO
  std::vector<uint32_t> ref_;
  std::vector<BlockHash> key_;  // 0: unkeyed
  std::vector<bool> keyed_;
  std::unordered_map<BlockHash, int32_t> by_hash_;
  std::list<int32_t> lru_;  // keyed, unreferenced; front = least recently released
  std::vector<std::list<int32_t>::iterator> lru_pos_;
  uint64_t evictions_ = 0;
  BlockObserver* observer_ = nullptr;
};

// "f32" or "f16" as a dtype id; std::invalid_argument otherwise.
uint32_t kv_dtype_from_name(const std::string& name);
// Bytes of one cache value of `dtype` (F32 or F16).
uint32_t kv_elem_bytes(uint32_t dtype);
// Throws unless `backend` supports a KV cache of `dtype`, naming the backend.
void check_kv_dtype(const Backend& backend, uint32_t dtype);

// The sliding-window layers' own pool (llama.cpp's SWA cache, vLLM's sliding-window manager):
// `windows` has each layer's window (0: a global layer), `blocks` the pool's size (0: no pool of
// their own; they keep every position like the global layers, as llama.cpp's --swa-full).
struct WindowPool {
  std::vector<uint32_t> windows;
  uint32_t blocks = 0;
};

class KvCache {
 public:
  // dtype: SY_DTYPE_F32, or SY_DTYPE_F16 when the backend reports it in kv_dtypes (else throws
  // naming the backend).
  KvCache(Backend& backend, uint32_t n_layer, uint32_t row_width, uint32_t block_size,
          uint32_t n_blocks, uint32_t dtype = SY_DTYPE_F32);
  // Rows of their own width per layer (Gemma 4's local and global layers differ).
  KvCache(Backend& backend, const std::vector<uint32_t>& row_widths, uint32_t block_size,
          uint32_t n_blocks, uint32_t dtype = SY_DTYPE_F32, const WindowPool& window = {});
  uint32_t dtype() const { return dtype_; }
  uint32_t block_size() const { return block_size_; }
  uint32_t row_width() const { return row_width_; }  // the widest layer's
  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  const sy_tensor& k(uint32_t layer) const { return k_[layer]; }
  const sy_tensor& v(uint32_t layer) const { return v_[layer]; }
  uint64_t bytes() const { return bytes_ + window_bytes_; }
  // Bytes of one block of the global layers (of every layer without a window pool).
  uint64_t bytes_per_block() const { return bytes_ / std::max<uint32_t>(1, pool_.total()); }
  uint32_t blocks_for(uint32_t n_tokens) const {
    return (n_tokens + block_size_ - 1) / block_size_;
  }

  // Sliding-window layers with a pool of their own. A sequence's table for them has the indexes
  // of its full table; the blocks wholly before its window are given back (-1) as it advances.
  bool windowed() const { return window_ > 0; }
  bool windowed(uint32_t layer) const { return window_ > 0 && layer_window_[layer]; }
  uint32_t window() const { return window_; }
  BlockPool& window_pool() { return window_pool_; }
  const BlockPool& window_pool() const { return window_pool_; }
  uint64_t bytes_per_window_block() const {
    return window_bytes_ / std::max<uint32_t>(1, window_pool_.total());
  }
  // Before a pass over positions [pos0, end): gives back the blocks of `table` wholly before the
  // window of pos0 (llama.cpp's SWA masking: position p sees [p - window + 1, p]) and appends
  // blocks up to `end`. False when the window pool is short (the table then keeps what it has).
  bool advance_window(std::vector<int32_t>& table, uint32_t pos0, uint32_t end);
  // Gives back every block of `table` and clears it.
  void release_window(std::vector<int32_t>& table);
  // Blocks of the window pool that `n_seqs` sequences can never exhaust while a pass carries at
  // most `batch_tokens` tokens: each holds its window's blocks (2 partial ones) plus its tokens'.
  static uint32_t window_pool_size(uint32_t window, uint32_t block_size, uint32_t n_seqs,
                                   uint32_t batch_tokens);

 private:
  uint32_t row_width_, block_size_, dtype_;
  BlockPool pool_, window_pool_;
  uint32_t window_ = 0;
  std::vector<bool> layer_window_;
  std::unique_ptr<Buffer> kbuf_, vbuf_;
  std::vector<sy_tensor> k_, v_;
  uint64_t bytes_ = 0, window_bytes_ = 0;
};

}  // namespace sy::model
