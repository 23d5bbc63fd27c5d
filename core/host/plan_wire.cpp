#include "host/plan_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/host_api.h"

namespace sy::wire {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes.
Io wait_for(int fd, short events, int64_t deadline_ns, std::string& why) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline_ns) {
      const int64_t left = deadline_ns - now_ns();
      if (left <= 0) return Io::timeout;
      timeout_ms = static_cast<int>(std::min<int64_t>((left + 999'999) / 1'000'000, 1 << 30));
    }
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) return Io::ok;  // readable, writable, or hung up: the next call tells which
    if (n == 0) continue;      // loop re-checks the deadline
    if (errno == EINTR) continue;
    why = std::string("poll: ") + std::strerror(errno);
    return Io::error;
  }
}

Io write_all(int fd, const char* p, size_t n, int64_t deadline_ns, std::string& why) {
  while (n > 0) {
    if (Io io = wait_for(fd, POLLOUT, deadline_ns, why); io != Io::ok) return io;
    // MSG_NOSIGNAL: a dead peer is an error here, not a SIGPIPE that kills the host.
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EPIPE || errno == ECONNRESET) return Io::eof;
      why = std::string("send: ") + std::strerror(errno);
      return Io::error;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Io::ok;
}

Io read_all(int fd, char* p, size_t n, int64_t deadline_ns, std::string& why) {
  while (n > 0) {
    if (Io io = wait_for(fd, POLLIN, deadline_ns, why); io != Io::ok) return io;
    const ssize_t k = ::recv(fd, p, n, MSG_DONTWAIT);
    if (k == 0) return Io::eof;
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return Io::eof;
      why = std::string("recv: ") + std::strerror(errno);
      return Io::error;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Io::ok;
}

void put_requests(Writer& w, const sy_sched_view& v, const sy_sched_request* a, uint32_t n) {
  w.put(n);
  w.bytes(a, size_t(n) * v.request_size);
}

std::string get_requests(Reader& r, uint32_t request_size, uint32_t& n) {
  n = r.get<uint32_t>();
  std::string s(size_t(n) * request_size, '\0');
  r.bytes(s.data(), s.size());
  return s;
}

}  // namespace

void Reader::need(size_t n) const {
  if (p_.size() - at_ < n)
    throw WireError("truncated message: needs " + std::to_string(n) + " bytes at offset " +
                    std::to_string(at_) + ", " + std::to_string(p_.size() - at_) + " left");
}

void Reader::bytes(void* out, size_t n) {
  need(n);
  std::memcpy(out, p_.data() + at_, n);
  at_ += n;
}

Io write_frame(int fd, uint8_t type, const std::string& payload, int64_t deadline_ns,
               std::string& why) {
  std::string f(5, '\0');
  const uint32_t len = static_cast<uint32_t>(payload.size());
  std::memcpy(f.data(), &len, 4);
  f[4] = static_cast<char>(type);
  f += payload;
  return write_all(fd, f.data(), f.size(), deadline_ns, why);
}

Io read_frame(int fd, Frame& out, int64_t deadline_ns, std::string& why) {
  char head[5];
  if (Io io = read_all(fd, head, sizeof head, deadline_ns, why); io != Io::ok) return io;
  uint32_t len;
  std::memcpy(&len, head, 4);
  if (len > kMaxFrame) {
    why = "frame of " + std::to_string(len) + " bytes is over the limit";
    return Io::error;
  }
  out.type = static_cast<uint8_t>(head[4]);
  out.payload.assign(len, '\0');
  return read_all(fd, out.payload.data(), len, deadline_ns, why);
}

namespace {

// The view's members that point into the host: they never travel (the child rebuilds them from
// the request arrays and its own proxies). Every other member travels as the struct's own
// bytes, so a member appended to sy_sched_view reaches the child without touching this file;
// only a new pointer member must be listed here, which the size check below forces.
constexpr size_t kViewPointers[] = {
    offsetof(sy_sched_view, waiting),  offsetof(sy_sched_view, running),
    offsetof(sy_sched_view, estimate_step_ns), offsetof(sy_sched_view, cost_ctx),
    offsetof(sy_sched_view, host_ctx)};
static_assert(offsetof(sy_sched_view, state_slots_cached) + sizeof(uint32_t) ==
                  sizeof(sy_sched_view),
              "sy_sched_view grew: list any new pointer member in kViewPointers, then move this "
              "check to the new last member");

}  // namespace

void put_view(Writer& w, const sy_sched_view& v, const sy_sched_plan& caps) {
  sy_sched_view bytes = v;
  for (size_t off : kViewPointers)
    std::memset(reinterpret_cast<char*>(&bytes) + off, 0, sizeof(void*));
  w.put(static_cast<uint32_t>(sizeof bytes));
  w.bytes(&bytes, sizeof bytes);
  w.put(static_cast<uint8_t>(v.estimate_step_ns != nullptr));
  put_requests(w, v, v.waiting, v.n_waiting);
  put_requests(w, v, v.running, v.n_running);
  w.put(caps.entries_capacity);
  w.put(caps.preempt_capacity);
}

ViewCopy get_view(Reader& r) {
  ViewCopy c;
  sy_sched_view& v = c.view;
  // A host built from another tree may send a longer or shorter view: take what both know.
  const uint32_t n = r.get<uint32_t>();
  std::string bytes(n, '\0');
  r.bytes(bytes.data(), n);
  std::memcpy(&v, bytes.data(), std::min<size_t>(n, sizeof v));
  for (size_t off : kViewPointers) std::memset(reinterpret_cast<char*>(&v) + off, 0, sizeof(void*));
  v.struct_size = sizeof v;
  if (v.request_size < sizeof(uint32_t))
    throw WireError("request_size " + std::to_string(v.request_size) + " is too small");
  c.has_cost_model = r.get<uint8_t>() != 0;
  const uint32_t n_waiting = v.n_waiting, n_running = v.n_running;
  c.waiting = get_requests(r, v.request_size, v.n_waiting);
  c.running = get_requests(r, v.request_size, v.n_running);
  if (v.n_waiting != n_waiting || v.n_running != n_running)
    throw WireError("request counts disagree with the view");
  v.waiting = reinterpret_cast<const sy_sched_request*>(c.waiting.data());
  v.running = reinterpret_cast<const sy_sched_request*>(c.running.data());
  c.entries_capacity = r.get<uint32_t>();
  c.preempt_capacity = r.get<uint32_t>();
  return c;
}

void put_plan(Writer& w, const sy_sched_plan& p) {
  const uint32_t ne = std::min(p.n_entries, p.entries_capacity);
  const uint32_t np = std::min(p.n_preempt, p.preempt_capacity);
  w.put(p.n_entries);
  w.put(ne);
  w.bytes(p.entries, size_t(ne) * sizeof(sy_sched_entry));
  w.put(p.n_preempt);
  w.put(np);
  w.bytes(p.preempt, size_t(np) * sizeof(uint64_t));
  w.put(p.wait_ns);
}

void get_plan(Reader& r, sy_sched_plan& p) {
  p.n_entries = r.get<uint32_t>();
  const uint32_t ne = r.get<uint32_t>();
  if (ne > p.entries_capacity || ne > p.n_entries)
    throw WireError("plan sends more entries than fit");
  r.bytes(p.entries, size_t(ne) * sizeof(sy_sched_entry));
  p.n_preempt = r.get<uint32_t>();
  const uint32_t np = r.get<uint32_t>();
  if (np > p.preempt_capacity || np > p.n_preempt)
    throw WireError("plan sends more preemptions than fit");
  r.bytes(p.preempt, size_t(np) * sizeof(uint64_t));
  p.wait_ns = r.get<int64_t>();
}

// The shape travels whole too (struct_size first, as the host's build has it).
void put_shape(Writer& w, const sy_step_shape& s) {
  sy_step_shape bytes = s;
  bytes.struct_size = sizeof bytes;
  w.bytes(&bytes, sizeof bytes);
}

sy_step_shape get_shape(Reader& r) {
  sy_step_shape s{};
  const uint32_t n = r.get<uint32_t>();  // its struct_size
  if (n < sizeof(uint32_t)) throw WireError("step shape of " + std::to_string(n) + " bytes");
  std::string rest(n - sizeof(uint32_t), '\0');
  r.bytes(rest.data(), rest.size());
  std::memcpy(reinterpret_cast<char*>(&s) + sizeof(uint32_t), rest.data(),
              std::min(rest.size(), sizeof s - sizeof(uint32_t)));
  s.struct_size = sizeof s;
  return s;
}

}  // namespace sy::wire
