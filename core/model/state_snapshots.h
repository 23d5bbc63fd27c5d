// Hybrid prefix caching: which recurrent-state slots hold a snapshot of which prefix. A snapshot
// is the whole recurrent state (conv and scan state of every recurrent layer) of a sequence right
// after a KV-block boundary, keyed by the hash chain of the KV block that ends there
// (kv_cache.h), so a request whose cached prefix reaches that block can restore it and skip the
// prefix. Slot bookkeeping only: the state lives in the model's RecurrentState, slots
// [first_slot, first_slot + capacity).
//
// Life of a slot: free -> reserved (a forward pass is writing it) -> published (findable) ->
// evicted back to free. A published snapshot is pinned while a request that will restore it is
// admitted but has not run yet; pinned ones are never evicted. Eviction takes unpinned snapshots
// that were never restored first, then the least recently used.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "model/kv_cache.h"

namespace sy::model {

class StateSnapshots {
 public:
  StateSnapshots(int32_t first_slot, uint32_t capacity);
  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  // Slots holding a snapshot or being written.
  uint32_t held() const { return capacity() - static_cast<uint32_t>(free_.size()); }
  uint64_t evictions() const { return evictions_; }
  // Slots a pass is writing or a request will restore: none once the engine is idle.
  uint32_t in_use() const;

  // True when `h` has a published snapshot.
  bool has(BlockHash h) const;
  // Pins `h`'s published snapshot and returns its slot (the caller restores from it, then
  // unpins); -1 when there is none.
  int32_t pin(BlockHash h);
  void unpin(int32_t slot);

  // A slot for a new snapshot of `h`: a free one, else an unpinned snapshot evicted. -1 when `h`
  // is already published or being written, or every slot is pinned or being written.
  int32_t reserve(BlockHash h);
  // The forward pass wrote the reserved slot: `h` is findable from now on.
  void publish(int32_t slot);
  // The write did not happen (the pass failed or its request went away): the slot is free.
  void abandon(int32_t slot);
  // Evicts every unpinned published snapshot whose key `keep` rejects (its KV block is gone).
  template <typename Keep>
  void drop_unless(Keep keep) {
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (s.state == State::published && s.pins == 0 && !keep(s.key)) evict(i);
    }
  }

 private:
  enum class State { free, reserved, published };
  struct Slot {
    State state = State::free;
    BlockHash key = 0;
    uint32_t pins = 0;
    bool restored = false;  // has been restored at least once (evicted after the cold ones)
    std::list<uint32_t>::iterator pos;
  };
  uint32_t index(int32_t slot) const;
  void evict(uint32_t i);
  void enqueue(uint32_t i);  // unpinned and published: evictable

  int32_t first_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  std::unordered_map<BlockHash, uint32_t> by_key_;  // published and reserved
  std::list<uint32_t> cold_, warm_;                 // evictable; front = least recently used
  uint64_t evictions_ = 0;
};

}  // namespace sy::model
