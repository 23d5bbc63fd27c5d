#include "model/state_snapshots.h"

#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"

namespace sy::model {

StateSnapshots::StateSnapshots(int32_t first_slot, uint32_t capacity)
    : first_(first_slot), slots_(capacity) {
  for (uint32_t i = capacity; i-- > 0;) free_.push_back(i);
}

uint32_t StateSnapshots::index(int32_t slot) const {
  const int64_t i = int64_t(slot) - first_;
  if (i < 0 || i >= int64_t(slots_.size()))
    throw sy::Bug("StateSnapshots: slot " + std::to_string(slot) + " is not a snapshot slot");
  return static_cast<uint32_t>(i);
}

uint32_t StateSnapshots::in_use() const {
  uint32_t n = 0;
  for (const Slot& s : slots_) n += s.state == State::reserved || s.pins > 0;
  return n;
}

bool StateSnapshots::has(BlockHash h) const {
  auto it = by_key_.find(h);
  return it != by_key_.end() && slots_[it->second].state == State::published;
}

void StateSnapshots::enqueue(uint32_t i) {
  Slot& s = slots_[i];
  std::list<uint32_t>& q = s.restored ? warm_ : cold_;
  s.pos = q.insert(q.end(), i);
}

int32_t StateSnapshots::pin(BlockHash h) {
  auto it = by_key_.find(h);
  if (it == by_key_.end() || slots_[it->second].state != State::published) return -1;
  Slot& s = slots_[it->second];
  if (s.pins++ == 0) (s.restored ? warm_ : cold_).erase(s.pos);
  s.restored = true;
  return first_ + static_cast<int32_t>(it->second);
}

void StateSnapshots::unpin(int32_t slot) {
  const uint32_t i = index(slot);
  Slot& s = slots_[i];
  if (s.state != State::published || s.pins == 0)
    throw sy::Bug("StateSnapshots: unpin of a snapshot that is not pinned");
  if (--s.pins == 0) enqueue(i);
}

void StateSnapshots::evict(uint32_t i) {
  Slot& s = slots_[i];
  (s.restored ? warm_ : cold_).erase(s.pos);
  by_key_.erase(s.key);
  s = Slot{};
  free_.push_back(i);
  ++evictions_;
}

int32_t StateSnapshots::reserve(BlockHash h) {
  if (by_key_.count(h)) return -1;
  if (free_.empty()) {
    if (!cold_.empty()) evict(cold_.front());
    else if (!warm_.empty()) evict(warm_.front());
    else return -1;
  }
  const uint32_t i = free_.back();
  free_.pop_back();
  Slot& s = slots_[i];
  s.state = State::reserved;
  s.key = h;
  by_key_.emplace(h, i);
  return first_ + static_cast<int32_t>(i);
}

void StateSnapshots::publish(int32_t slot) {
  const uint32_t i = index(slot);
  if (slots_[i].state != State::reserved)
    throw sy::Bug("StateSnapshots: publish of a slot that was not reserved");
  slots_[i].state = State::published;
  enqueue(i);
}

void StateSnapshots::abandon(int32_t slot) {
  const uint32_t i = index(slot);
  Slot& s = slots_[i];
  if (s.state != State::reserved)
    throw sy::Bug("StateSnapshots: abandon of a slot that was not reserved");
  by_key_.erase(s.key);
  s = Slot{};
  free_.push_back(i);
}

}  // namespace sy::model
