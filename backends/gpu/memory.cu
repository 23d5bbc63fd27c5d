// Device buffers, pinned staging and the ordering between the compute and transfer streams.
//
// Uploads (buffer_write) run on the transfer stream from pinned chunks, so they overlap with ops
// already queued on the compute stream unless an op queued earlier uses the same buffer. An op
// waits for the uploads into the buffers it touches; a transfer waits for the ops that used its
// buffer. Reads block until the data is on the host.
#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "gpu_backend.h"

namespace sy::gpu {
namespace {

constexpr size_t kChunk = 4u << 20;           // one pinned staging copy
constexpr size_t kStagingBytes = 4 * kChunk;  // room for the chunks in flight
constexpr size_t kMetaBytes = 1u << 20;
constexpr size_t kAlign = 256;

size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw plugin::Error(e == cudaErrorMemoryAllocation ? SY_ERR_OUT_OF_MEMORY : SY_ERR_DEVICE,
                      std::string(what) + ": " + cudaGetErrorString(e));
}

// ---- PinnedRing ----

PinnedRing::~PinnedRing() {
  for (const Span& s : inflight_) {
    (void)cudaEventSynchronize(s.done);
    (void)cudaEventDestroy(s.done);
  }
  for (cudaEvent_t e : spare_) (void)cudaEventDestroy(e);
  if (base_) (void)cudaFreeHost(base_);
}

void PinnedRing::wait_front() {
  check(cudaEventSynchronize(inflight_.front().done), "staging: wait");
  spare_.push_back(inflight_.front().done);
  inflight_.pop_front();
}

char* PinnedRing::acquire(size_t n) {
  n = align_up(std::max<size_t>(n, 1), kAlign);
  if (n > cap_ || !base_) {
    while (!inflight_.empty()) wait_front();
    if (base_) (void)cudaFreeHost(base_);
    base_ = nullptr;
    cap_ = std::max(cap_, n);
    void* p = nullptr;
    check(cudaMallocHost(&p, cap_), "staging: pinned allocation");
    base_ = static_cast<char*>(p);
    head_ = 0;
  }
  if (head_ + n > cap_) head_ = 0;
  const size_t begin = head_, end = head_ + n;
  // Spans complete in FIFO order (one stream per ring), so waiting from the front suffices.
  auto overlaps = [&](const Span& s) { return s.begin < end && begin < s.end; };
  while (std::any_of(inflight_.begin(), inflight_.end(), overlaps)) wait_front();
  head_ = end;
  return base_ + begin;
}

cudaEvent_t PinnedRing::release(char* p, size_t n, cudaStream_t s) {
  cudaEvent_t e = nullptr;
  if (!spare_.empty()) {
    e = spare_.back();
    spare_.pop_back();
  } else {
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "staging: event");
  }
  check(cudaEventRecord(e, s), "staging: event record");
  const size_t begin = (size_t)(p - base_);
  inflight_.push_back({begin, begin + align_up(std::max<size_t>(n, 1), kAlign), e});
  return e;
}

// ---- DeviceArena ----

DeviceArena::~DeviceArena() {
  if (p_) (void)cudaFree(p_);
}

char* DeviceArena::get(size_t n, cudaStream_t s) {
  if (n <= cap_) return p_;
  check(cudaStreamSynchronize(s), "scratch: wait");  // the old scratch may still be read
  const size_t want = std::max(align_up(n, kAlign), 2 * cap_);
  if (p_) (void)cudaFree(p_);
  p_ = nullptr;
  cap_ = 0;
  void* p = nullptr;
  check(cudaMalloc(&p, want), "scratch: device allocation");
  p_ = static_cast<char*>(p);
  cap_ = want;
  return p_;
}

// ---- lifetime ----

void GpuBackend::init_memory() {
  check(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), "create: compute stream");
  check(cudaStreamCreateWithFlags(&transfer_, cudaStreamNonBlocking), "create: transfer stream");
  check(cudaEventCreateWithFlags(&compute_fence_, cudaEventDisableTiming), "create: event");
  staging_ = std::make_unique<PinnedRing>(kStagingBytes);
  meta_ring_ = std::make_unique<PinnedRing>(kMetaBytes);
}

void GpuBackend::release_memory() noexcept {
  if (compute_) (void)cudaStreamSynchronize(compute_);
  if (transfer_) (void)cudaStreamSynchronize(transfer_);
  for (auto& [buf, st] : state_) {
    (void)cudaEventDestroy(st.written);
    (void)cudaFree(buf->data);  // the Buffer itself is deleted by plugin::Backend
  }
  state_.clear();
  by_base_.clear();
  staging_.reset();
  meta_ring_.reset();
  if (compute_fence_) (void)cudaEventDestroy(compute_fence_);
  if (compute_) (void)cudaStreamDestroy(compute_);
  if (transfer_) (void)cudaStreamDestroy(transfer_);
}

// ---- buffers ----

Buffer* GpuBackend::alloc_buffer(uint64_t size) {
  void* p = nullptr;
  // One allocation of at least 256 bytes: cudaMalloc(0) would give no distinct address.
  const uint64_t bytes = std::max<uint64_t>(size, kAlign);
  if (bytes > SIZE_MAX) throw plugin::Error(SY_ERR_OUT_OF_MEMORY, "buffer_alloc: too big");
  const cudaError_t e = cudaMalloc(&p, (size_t)bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so later launches are not blamed
    char msg[160];
    std::snprintf(msg, sizeof msg, "buffer_alloc: cannot allocate %" PRIu64 " bytes: %s", size,
                  cudaGetErrorString(e));
    throw plugin::Error(e == cudaErrorMemoryAllocation ? SY_ERR_OUT_OF_MEMORY : SY_ERR_DEVICE, msg);
  }
  auto buf = std::make_unique<Buffer>(Buffer{p, size, false});  // freed by free_buffer
  BufferState st;
  try {
    check(cudaEventCreateWithFlags(&st.written, cudaEventDisableTiming), "buffer_alloc: event");
    // Zeroed, like a fresh page: a read before any write returns zeros on every backend.
    check(cudaMemsetAsync(p, 0, (size_t)bytes, transfer_), "buffer_alloc: memset");
    check(cudaEventRecord(st.written, transfer_), "buffer_alloc: event record");
    st.write_pending = true;
    state_.emplace(buf.get(), st);
    by_base_.emplace((uintptr_t)p, buf.get());
    buffers.insert(buf.get());
  } catch (...) {
    state_.erase(buf.get());
    by_base_.erase((uintptr_t)p);
    if (st.written) (void)cudaEventDestroy(st.written);
    (void)cudaFree(p);
    throw;
  }
  return buf.release();
}

void GpuBackend::free_buffer(Buffer* b) {
  synchronize();  // queued work may still use the memory
  (void)cudaEventDestroy(state_of(*b).written);
  state_.erase(b);
  by_base_.erase((uintptr_t)b->data);
  buffers.erase(b);
  (void)cudaFree(b->data);
  delete b;
}

void GpuBackend::write_buffer(Buffer& b, uint64_t offset, const void* src, uint64_t size) {
  if (size == 0) return;
  BufferState& st = state_of(b);
  order_after_compute(st);
  char* dst = static_cast<char*>(b.data) + offset;
  for (uint64_t done = 0; done < size;) {
    const size_t n = (size_t)std::min<uint64_t>(kChunk, size - done);
    char* pinned = staging_->acquire(n);
    std::memcpy(pinned, static_cast<const char*>(src) + done, n);
    check(cudaMemcpyAsync(dst + done, pinned, n, cudaMemcpyHostToDevice, transfer_),
          "buffer_write: copy");
    staging_->release(pinned, n, transfer_);
    done += n;
  }
  check(cudaEventRecord(st.written, transfer_), "buffer_write: event record");
  st.write_pending = true;
}

void GpuBackend::read_buffer(Buffer& b, uint64_t offset, void* dst, uint64_t size) {
  if (size == 0) return;
  order_after_compute(state_of(b));
  const char* src = static_cast<const char*>(b.data) + offset;
  struct Pending {
    char* pinned;
    size_t n;
    uint64_t at;
    cudaEvent_t done;
  };
  // Double buffered: the copy of chunk i+1 runs while chunk i is copied out of pinned memory.
  // Two chunks in a ring of four can never be handed out again before they are copied out.
  std::deque<Pending> q;
  auto copy_out = [&] {
    const Pending& p = q.front();
    check(cudaEventSynchronize(p.done), "buffer_read: wait");
    std::memcpy(static_cast<char*>(dst) + p.at, p.pinned, p.n);
    q.pop_front();
  };
  for (uint64_t done = 0; done < size;) {
    if (q.size() == 2) copy_out();
    const size_t n = (size_t)std::min<uint64_t>(kChunk, size - done);
    char* pinned = staging_->acquire(n);
    check(cudaMemcpyAsync(pinned, src + done, n, cudaMemcpyDeviceToHost, transfer_),
          "buffer_read: copy");
    q.push_back({pinned, n, done, staging_->release(pinned, n, transfer_)});
    done += n;
  }
  while (!q.empty()) copy_out();
}

void GpuBackend::synchronize() {
  check(cudaStreamSynchronize(compute_), "synchronize");
  check(cudaStreamSynchronize(transfer_), "synchronize");
  for (auto& [buf, st] : state_) st.write_pending = false;
  fenced_seq_ = op_seq_;
}

// ---- ordering ----

void GpuBackend::order_after_compute(const BufferState& s) {
  if (s.compute_seq <= fenced_seq_) return;
  check(cudaEventRecord(compute_fence_, compute_), "fence: event record");
  check(cudaStreamWaitEvent(transfer_, compute_fence_, 0), "fence: wait");
  fenced_seq_ = op_seq_;
}

void GpuBackend::begin_op(std::initializer_list<const void*> addresses) {
  ++op_seq_;
  for (const void* p : addresses) {
    if (!p) continue;
    // Validation placed it inside a live buffer: the last buffer starting at or below it.
    auto it = by_base_.upper_bound((uintptr_t)p);
    BufferState& st = state_of(*std::prev(it)->second);
    if (st.write_pending) {
      check(cudaStreamWaitEvent(compute_, st.written, 0), "wait for upload");
      st.write_pending = false;
    }
    st.compute_seq = op_seq_;
  }
}

size_t GpuBackend::meta_add(const void* p, size_t bytes) {
  const size_t at = align_up(meta_host_.size(), 16);
  meta_host_.resize(at + bytes);
  if (bytes) std::memcpy(meta_host_.data() + at, p, bytes);
  return at;
}

char* GpuBackend::meta_upload() {
  const size_t n = std::max<size_t>(meta_host_.size(), 1);
  char* dev = meta_dev_.get(n, compute_);
  char* pinned = meta_ring_->acquire(n);
  std::memcpy(pinned, meta_host_.data(), meta_host_.size());
  check(cudaMemcpyAsync(dev, pinned, n, cudaMemcpyHostToDevice, compute_), "upload op arguments");
  meta_ring_->release(pinned, n, compute_);
  return dev;
}

void GpuBackend::launched(const char* op) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw plugin::Error(SY_ERR_DEVICE,
                        std::string(op) + ": kernel launch failed: " + cudaGetErrorString(e));
}

}  // namespace sy::gpu
