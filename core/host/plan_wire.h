// The protocol between the host and switchyard-plugin-runner, which runs one scheduler plugin in
// a child process. Frames over a socketpair: u32 payload length, u8 type, payload. Both ends are
// built from the same tree and run on the same machine, so values travel in native byte order.
//
//   child -> host   kHello        u8 ok, then name, version, description, u32 abi, u64 caps
//                                 (ok) or the refusal message (not ok)
//   host  -> child  kCreate       u32 n, n x (key, value)
//   child -> host   kResult       u32 status, error
//   host  -> child  kPlan         the view's own bytes (host pointers cleared), then the request
//                                 arrays and the plan capacities (put_view / get_view)
//   child -> host   kEstimate     the sy_step_shape's bytes; the host answers kEstimateReply i64 ns
//   child -> host   kLog          u32 level, message      (any time)
//   child -> host   kCounter      name, f64 delta         (after each call)
//   child -> host   kPlanResult   u32 status, error, the plan (put_plan / get_plan)
// The host closes the socket to stop the child.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/abi/scheduler.h"
#include "switchyard/common/error.h"

namespace sy::wire {

enum FrameType : uint8_t {
  kHello = 1,
  kCreate,
  kResult,
  kPlan,
  kEstimate,
  kEstimateReply,
  kLog,
  kCounter,
  kPlanResult,
};

constexpr uint32_t kMaxFrame = 64u << 20;  // a larger length means a corrupt stream

// A malformed frame: the host stops that child (caught apart from the plugin's own errors).
class WireError : public Error {
 public:
  explicit WireError(const std::string& message) : Error(SY_ERR_INTERNAL, message) {}
};

class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    bytes(&v, sizeof v);
  }
  void str(const std::string& s) {
    put(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void bytes(const void* p, size_t n) {
    if (n) buf_.append(static_cast<const char*>(p), n);
  }
  const std::string& data() const { return buf_; }

 private:
  std::string buf_;
};

// Throws WireError when the payload is shorter than what is read.
class Reader {
 public:
  explicit Reader(const std::string& payload) : p_(payload) {}
  template <typename T>
  T get() {
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  std::string str() {
    const uint32_t n = get<uint32_t>();
    need(n);
    std::string s = p_.substr(at_, n);
    at_ += n;
    return s;
  }
  void bytes(void* out, size_t n);
  bool done() const { return at_ == p_.size(); }

 private:
  void need(size_t n) const;
  const std::string& p_;
  size_t at_ = 0;
};

struct Frame {
  uint8_t type = 0;
  std::string payload;
};

enum class Io { ok, eof, timeout, error };

// Deadlines are on the host clock (now_ns()); 0 waits forever. `why` explains a failure.
Io write_frame(int fd, uint8_t type, const std::string& payload, int64_t deadline_ns,
               std::string& why);
Io read_frame(int fd, Frame& out, int64_t deadline_ns, std::string& why);

// A view as the child rebuilds it: every member but the host's pointers, derived from the
// struct (nothing here lists the scalars, so none can be left out), and request arrays it owns.
struct ViewCopy {
  sy_sched_view view{};
  std::string waiting, running;  // request_size-strided sy_sched_request arrays
  bool has_cost_model = false;
  uint32_t entries_capacity = 0, preempt_capacity = 0;
};
void put_view(Writer& w, const sy_sched_view& v, const sy_sched_plan& capacities);
ViewCopy get_view(Reader& r);

// A plan sends at most its capacity of entries but its claimed counts, so the host's validator
// sees exactly what the plugin wrote.
void put_plan(Writer& w, const sy_sched_plan& p);
void get_plan(Reader& r, sy_sched_plan& into);

void put_shape(Writer& w, const sy_step_shape& s);
sy_step_shape get_shape(Reader& r);

}  // namespace sy::wire
