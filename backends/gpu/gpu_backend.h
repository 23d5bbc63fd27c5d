// The GPU backend: one device, a compute stream and a transfer stream, device buffers with
// per-buffer ordering between the two streams, pinned staging, and the op kernels. The shared
// plugin layer validates every op before it reaches this class; Tensor::data is a device address.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "switchyard/sdk/backend.h"
#include "vendor.h"

namespace sy::gpu {

using plugin::AttentionOp;
using plugin::Buffer;
using plugin::KvStoreOp;
using plugin::Tensor;

// Throws Error(SY_ERR_DEVICE, "<what>: <runtime's message>") unless e is cudaSuccess
// (SY_ERR_OUT_OF_MEMORY for an allocation failure).
void check(cudaError_t e, const char* what);

// Pinned host memory handed out in FIFO order. A span is handed out again only after the copy
// that used it (an event recorded on that copy's stream) has completed.
class PinnedRing {
 public:
  explicit PinnedRing(size_t capacity) : cap_(capacity) {}
  ~PinnedRing();
  PinnedRing(const PinnedRing&) = delete;
  PinnedRing& operator=(const PinnedRing&) = delete;

  // n bytes no queued copy still uses; grows (after all copies finished) when n > capacity.
  char* acquire(size_t n);
  // Call after enqueuing the copy that reads or writes [p, p + n) on s; returns its event.
  cudaEvent_t release(char* p, size_t n, cudaStream_t s);

 private:
  struct Span {
    size_t begin, end;
    cudaEvent_t done;
  };
  void wait_front();

  char* base_ = nullptr;
  size_t cap_;
  size_t head_ = 0;
  std::deque<Span> inflight_;
  std::vector<cudaEvent_t> spare_;
};

// Device scratch used by one op at a time on the compute stream, so stream order makes reuse
// safe; growing waits for that stream first.
class DeviceArena {
 public:
  ~DeviceArena();
  char* get(size_t n, cudaStream_t s);

 private:
  char* p_ = nullptr;
  size_t cap_ = 0;
};

class Blas;  // blas.h: a runtime-loaded vendor BLAS, when there is one

class GpuBackend final : public plugin::Backend {
 public:
  // A backend without a device: device_info says `reason`, every other call is refused.
  explicit GpuBackend(std::string reason);
  GpuBackend(int device, const cudaDeviceProp& prop);
  ~GpuBackend() override;

  bool available() const { return available_; }
  int device() const { return device_; }
  sy_device_info info() const;

  Buffer* alloc_buffer(uint64_t size);
  void free_buffer(Buffer* b);
  // Returns once src was copied to pinned memory; the upload itself is queued.
  void write_buffer(Buffer& b, uint64_t offset, const void* src, uint64_t size);
  // Blocking: dst holds the data when it returns.
  void read_buffer(Buffer& b, uint64_t offset, void* dst, uint64_t size);
  void synchronize();

  SY_BACKEND_OP_OVERRIDES;
  SY_BACKEND_OP_OVERRIDES_1_5;
  SY_BACKEND_OP_OVERRIDES_1_6;

 private:
  struct BufferState {
    cudaEvent_t written = nullptr;  // the last upload into the buffer, on the transfer stream
    bool write_pending = false;     // the compute stream has not waited for `written` yet
    uint64_t compute_seq = 0;       // the last op that used the buffer
  };

  void init_memory();              // streams, events, staging (memory.cu)
  void release_memory() noexcept;  // waits for queued work, frees every buffer

  // Start of every op, given the device addresses it reads or writes (nullptr: an absent input):
  // the compute stream waits for pending uploads into their buffers, which are marked as used.
  void begin_op(std::initializer_list<const void*> addresses);
  // Before a transfer touches a buffer: the transfer stream waits for queued ops that used it.
  void order_after_compute(const BufferState& s);
  BufferState& state_of(const Buffer& b) { return state_.at(&b); }

  // Host arrays an op needs on the device, packed and uploaded in one copy on the compute stream.
  void meta_begin() { meta_host_.clear(); }
  size_t meta_add(const void* p, size_t bytes);
  char* meta_upload();  // device address of the pack's first byte
  // Throws naming `op` when the last launch failed.
  void launched(const char* op);
  // y{N, M} (row stride ldy) = W{K, N} x{K, M} for F32 W: vendor BLAS or the tiled kernel.
  void gemm_f32(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
                int64_t ldy);

  bool available_ = false;
  std::string name_;
  int device_ = 0;
  cudaStream_t compute_ = nullptr, transfer_ = nullptr;
  cudaEvent_t compute_fence_ = nullptr;
  uint64_t op_seq_ = 0, fenced_seq_ = 0;  // ops enqueued; ops the transfer stream has waited for
  std::map<uintptr_t, Buffer*> by_base_;  // device address -> buffer, to find a tensor's buffer
  std::unordered_map<const Buffer*, BufferState> state_;
  std::unique_ptr<PinnedRing> staging_;    // uploads and reads, transfer stream
  std::unique_ptr<PinnedRing> meta_ring_;  // op metadata, compute stream
  std::vector<char> meta_host_;
  DeviceArena meta_dev_;  // op metadata
  DeviceArena scratch_;   // per-op scratch: dequantised weight panels, expert routing lists
  std::unique_ptr<Blas> blas_;
};

}  // namespace sy::gpu
