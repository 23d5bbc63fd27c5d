#include "model/kv_cache.h"

#include <stdexcept>
#include <vector>

#include "switchyard/common/error.h"

namespace sy::model {

std::vector<BlockHash> block_hashes(const int32_t* tokens, size_t n, uint32_t block_size,
                                    BlockHash seed) {
  std::vector<BlockHash> out;
  BlockHash h = seed ^ 0x9e3779b97f4a7c15ull;
  for (size_t b = 0; (b + 1) * block_size <= n; ++b) {
    // FNV-1a over the previous hash and the block's token ids; 0 is reserved for "unkeyed".
    uint64_t x = 1469598103934665603ull ^ h;
    for (uint32_t i = 0; i < block_size; ++i) {
      x = (x ^ static_cast<uint32_t>(tokens[b * block_size + i])) * 1099511628211ull;
      x ^= x >> 29;
    }
    h = x ? x : 1;
    out.push_back(h);
  }
  return out;
}

BlockPool::BlockPool(uint32_t n_blocks)
    : total_(n_blocks), ref_(n_blocks, 0), key_(n_blocks, 0), keyed_(n_blocks, false),
      lru_pos_(n_blocks) {
  free_.reserve(n_blocks);
  for (uint32_t i = n_blocks; i-- > 0;) free_.push_back(static_cast<int32_t>(i));
}

int32_t BlockPool::take_one() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    b = lru_.front();  // evict the least recently released cached block
    lru_.pop_front();
    by_hash_.erase(key_[b]);
    if (observer_) observer_->blocks_removed(std::span<const BlockHash>(&key_[b], 1));
    keyed_[b] = false;
    key_[b] = 0;
    ++evictions_;
  }
  ref_[b] = 1;
  return b;
}

bool BlockPool::allocate(uint32_t n, std::vector<int32_t>& into) {
  if (n > free_count()) return false;
  for (uint32_t i = 0; i < n; ++i) into.push_back(take_one());
  return true;
}

void BlockPool::release(std::vector<int32_t>& blocks) {
  // Reverse order: a sequence's tail blocks are the least likely to be shared, so they are
  // evicted before its head.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const int32_t b = *it;
    if (ref_[b] == 0) throw sy::Bug("BlockPool: block released twice");
    if (--ref_[b] > 0) continue;
    if (keyed_[b]) lru_pos_[b] = lru_.insert(lru_.end(), b);
    else free_.push_back(b);
  }
  blocks.clear();
}

uint32_t BlockPool::match(const std::vector<BlockHash>& hashes, uint32_t max_blocks) const {
  uint32_t n = 0;
  while (n < hashes.size() && n < max_blocks && by_hash_.count(hashes[n])) ++n;
  return n;
}

void BlockPool::acquire_cached(const std::vector<BlockHash>& hashes, uint32_t n,
                               std::vector<int32_t>& into) {
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t b = by_hash_.at(hashes[i]);
    if (ref_[b]++ == 0) lru_.erase(lru_pos_[b]);
    into.push_back(b);
  }
}

uint32_t BlockPool::unreferenced_among(const std::vector<BlockHash>& hashes, uint32_t n) const {
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; ++i) k += ref_[by_hash_.at(hashes[i])] == 0;
  return k;
}

void BlockPool::publish(int32_t block, BlockHash hash, BlockHash parent,
                        std::span<const int32_t> tokens) {
  if (keyed_[block] || by_hash_.count(hash)) return;
  keyed_[block] = true;
  key_[block] = hash;
  by_hash_.emplace(hash, block);
  if (observer_) observer_->block_stored(hash, parent, tokens);
}

std::vector<BlockHash> BlockPool::cached_hashes() const {
  std::vector<BlockHash> out;
  out.reserve(by_hash_.size());
  for (const auto& [h, b] : by_hash_) out.push_back(h);
  return out;
}

BlockPool::~BlockPool() {
  if (!observer_ || by_hash_.empty()) return;
  const std::vector<BlockHash> gone = cached_hashes();
  observer_->blocks_removed(gone);
}

uint32_t kv_dtype_from_name(const std::string& name) {
  if (name == "f32") return SY_DTYPE_F32;
  if (name == "f16") return SY_DTYPE_F16;
  throw sy::Error("KV cache dtype '" + name + "': expected f32 or f16");
}

uint32_t kv_elem_bytes(uint32_t dtype) {
  return dtype == SY_DTYPE_F16 ? 2 : 4;
}

void check_kv_dtype(const Backend& backend, uint32_t dtype) {
  if (dtype == SY_DTYPE_F32) return;
  if (dtype != SY_DTYPE_F16)
    throw sy::Error(SY_ERR_UNSUPPORTED,
                    "KV cache dtype " + std::to_string(dtype) + " is not F32 or F16");
  // device_info's kv_dtypes (ABI 1.3); a plugin older than 1.3 leaves it 0: F32 only.
  if (!((backend.device().kv_dtypes >> SY_DTYPE_F16) & 1u))
    throw sy::Error(SY_ERR_UNSUPPORTED,
                    "backend " + backend.plugin().name() +
                        " does not support an F16 KV cache ([engine] kv_dtype = \"f16\")");
}

KvCache::KvCache(Backend& backend, uint32_t n_layer, uint32_t row_width, uint32_t block_size,
                 uint32_t n_blocks, uint32_t dtype)
    : KvCache(backend, std::vector<uint32_t>(n_layer, row_width), block_size, n_blocks, dtype) {}

KvCache::KvCache(Backend& backend, const std::vector<uint32_t>& row_widths, uint32_t block_size,
                 uint32_t n_blocks, uint32_t dtype, const WindowPool& window)
    : row_width_(0),
      block_size_(block_size),
      dtype_(dtype),
      pool_(n_blocks),
      window_pool_(window.blocks) {
  check_kv_dtype(backend, dtype);
  layer_window_.assign(row_widths.size(), false);
  if (window.blocks) {
    if (window.windows.size() != row_widths.size())
      throw sy::Bug("KvCache: a window per layer is needed");
    for (size_t l = 0; l < row_widths.size(); ++l) {
      if (!window.windows[l]) continue;
      if (window_ && window.windows[l] != window_)
        throw sy::Bug("KvCache: the windowed layers' windows differ");
      window_ = window.windows[l];
      layer_window_[l] = true;
    }
  }
  const uint64_t slots = static_cast<uint64_t>(block_size) * n_blocks;
  const uint64_t window_slots = static_cast<uint64_t>(block_size) * window_pool_.total();
  const uint64_t elem = kv_elem_bytes(dtype);
  uint64_t total = 0;  // bytes of K (and of V), over the layers
  for (size_t l = 0; l < row_widths.size(); ++l) {
    row_width_ = std::max(row_width_, row_widths[l]);
    const uint64_t b = (layer_window_[l] ? window_slots : slots) * row_widths[l] * elem;
    (layer_window_[l] ? window_bytes_ : bytes_) += 2 * b;
    total += b;
  }
  if (total == 0) return;  // no attention layers: the cache only hands out block ids
  kbuf_ = backend.alloc(total);
  vbuf_ = backend.alloc(total);
  uint64_t at = 0;
  for (size_t l = 0; l < row_widths.size(); ++l) {
    const int64_t n = static_cast<int64_t>(layer_window_[l] ? window_slots : slots);
    k_.push_back(make_tensor(*kbuf_, dtype, {row_widths[l], n}, at));
    v_.push_back(make_tensor(*vbuf_, dtype, {row_widths[l], n}, at));
    at += static_cast<uint64_t>(n) * row_widths[l] * elem;
  }
}

bool KvCache::advance_window(std::vector<int32_t>& table, uint32_t pos0, uint32_t end) {
  const uint32_t first = pos0 >= window_ ? (pos0 - window_ + 1) / block_size_ : 0;
  std::vector<int32_t> gone;
  for (uint32_t b = 0; b < first && b < table.size(); ++b)
    if (table[b] >= 0) gone.push_back(table[b]), table[b] = -1;
  window_pool_.release(gone);
  if (table.size() < first) table.resize(first, -1);
  const uint32_t want = blocks_for(end);
  return want <= table.size() ||
         window_pool_.allocate(want - static_cast<uint32_t>(table.size()), table);
}

void KvCache::release_window(std::vector<int32_t>& table) {
  std::erase(table, -1);
  window_pool_.release(table);
}

uint32_t KvCache::window_pool_size(uint32_t window, uint32_t block_size, uint32_t n_seqs,
                                   uint32_t batch_tokens) {
  const uint64_t per_seq = (window + block_size - 1) / block_size + 2;
  const uint64_t n = n_seqs * per_seq + (batch_tokens + block_size - 1) / block_size;
  return static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX));
}

}  // namespace sy::model
