// A byte budget shared by the requests in flight: each reserves its estimated cost before the
// server buffers or parses it, and a request that does not fit is refused (503) instead of
// growing the process. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace sy::server::http {

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  bool try_reserve(uint64_t n) {
    uint64_t cur = used_.load();
    do {
      if (n > limit_ || cur > limit_ - n) return false;
    } while (!used_.compare_exchange_weak(cur, cur + n));
    return true;
  }
  void release(uint64_t n) { used_.fetch_sub(n); }
  uint64_t in_use() const { return used_.load(); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

// One request's share of a budget; grows as its body arrives and is given back on destruction.
class Reservation {
 public:
  Reservation() = default;
  explicit Reservation(MemoryBudget* b) : budget_(b) {}
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  Reservation& operator=(Reservation&& o) noexcept {
    if (this != &o) {
      release();
      budget_ = o.budget_;
      held_ = o.held_;
      o.held_ = 0;
    }
    return *this;
  }
  ~Reservation() { release(); }
  // Holds `total` bytes from now on (never less than held); false when the budget lacks them.
  bool grow_to(uint64_t total) {
    if (!budget_ || total <= held_) return true;
    if (!budget_->try_reserve(total - held_)) return false;
    held_ = total;
    return true;
  }
  void release() {
    if (budget_ && held_) budget_->release(held_);
    held_ = 0;
  }
  uint64_t held() const { return held_; }

 private:
  MemoryBudget* budget_ = nullptr;
  uint64_t held_ = 0;
};

}  // namespace sy::server::http
