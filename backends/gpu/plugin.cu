// Entry point of the GPU plugins (cuda, hip, and the test-only gpu_emu). The shared layer's
// table serves validation and the ops; memory entries are the device's; every entry but
// device_info answers SY_ERR_UNAVAILABLE "no device" when the backend found no device.
#include <cstddef>
#include <cstring>

#include "device.h"
#include "gpu_backend.h"
#include "switchyard/sdk/backend.h"

#if defined(SY_GPU_HIP)
#define SY_GPU_PLUGIN_NAME "hip"
#define SY_GPU_DESCRIPTION \
  "ROCm HIP backend: one kernel source with cuda, tiled matmul, two streams"
#elif defined(SY_GPU_EMU) && SY_WARP == 64
#define SY_GPU_PLUGIN_NAME "gpu_emu64"
#define SY_GPU_DESCRIPTION \
  "Test only: the GPU kernels emulated on the CPU, wave 64 as the hip build"
#elif defined(SY_GPU_EMU)
#define SY_GPU_PLUGIN_NAME "gpu_emu"
#define SY_GPU_DESCRIPTION \
  "Test only: the GPU kernels emulated on the CPU, warp 32 as the cuda build"
#else
#define SY_GPU_PLUGIN_NAME "cuda"
#define SY_GPU_DESCRIPTION \
  "CUDA backend: one kernel source with hip, cuBLAS when found, two streams"
#endif

namespace {

using sy::gpu::GpuBackend;
using sy::plugin::Buffer;
using sy::plugin::Error;
using sy::plugin::transfer_buffer;

GpuBackend* gpu_of(sy_backend_t h) {
  // Every handle this plugin creates is a GpuBackend.
  return static_cast<GpuBackend*>(reinterpret_cast<sy::plugin::Backend*>(h));
}

void set_error(sy_backend_t h, const char* message) noexcept {
  sy::plugin::set_error(gpu_of(h)->last_error, message);
}

// The SDK's boundary (exceptions to status and last_error) with the handle as a GpuBackend.
// h is never NULL here: the gates hand NULL handles to the shared layer.
template <class F>
sy_status guarded(sy_backend_t h, const char* op, F&& f) noexcept {
  return sy::plugin::guarded<GpuBackend>(h, op, std::forward<F>(f));
}

// The shared layer's own table: it reports calls on a NULL handle with the thread's last_error.
const sy_backend_iface& shared();

sy_status device_info(sy_backend_t h, sy_device_info* out) {
  if (!h) return shared().device_info(h, out);
  return guarded(h, "device_info",
                 [&](GpuBackend& be) { sy::plugin::copy_device_info(be.info(), out); });
}

sy_status buffer_alloc(sy_backend_t h, uint64_t size, sy_buffer_t* out) {
  return guarded(h, "buffer_alloc", [&](GpuBackend& be) {
    if (!out) throw Error(SY_ERR_INVALID_ARG, "buffer_alloc: out is NULL");
    *out = reinterpret_cast<sy_buffer_t>(be.alloc_buffer(size));
  });
}

void buffer_free(sy_backend_t h, sy_buffer_t buffer) {
  if (!h || !buffer) return;
  GpuBackend& be = *gpu_of(h);
  Buffer* b = reinterpret_cast<Buffer*>(buffer);
  if (!be.buffers.count(b)) {
    sy::plugin::log_to_host(
        SY_LOG_WARN, "buffer_free: ignoring a buffer that is not a live buffer of this backend");
    return;
  }
  guarded(h, "buffer_free", [&](GpuBackend& g) {
    if (g.available()) (void)cudaSetDevice(g.device());
    g.free_buffer(b);
  });
}

// Device memory is never host visible.
void* buffer_host_ptr(sy_backend_t, sy_buffer_t) {
  return nullptr;
}

sy_status buffer_write(sy_backend_t h, sy_buffer_t buffer, uint64_t offset, const void* src,
                       uint64_t size) {
  return guarded(h, "buffer_write", [&](GpuBackend& be) {
    Buffer* b = transfer_buffer(be, "buffer_write", buffer, src, "src", offset, size);
    be.write_buffer(*b, offset, src, size);
  });
}

sy_status buffer_read(sy_backend_t h, sy_buffer_t buffer, uint64_t offset, void* dst,
                      uint64_t size) {
  return guarded(h, "buffer_read", [&](GpuBackend& be) {
    Buffer* b = transfer_buffer(be, "buffer_read", buffer, dst, "dst", offset, size);
    be.read_buffer(*b, offset, dst, size);
  });
}

sy_status synchronize(sy_backend_t h) {
  return guarded(h, "synchronize", [](GpuBackend& be) { be.synchronize(); });
}

// The table the gates forward to: shared ops, device memory.
const sy_backend_iface& inner();

// Wraps entry M of inner(): refused without a device, else run on the backend's device (the
// runtime's current device is per thread, and handles may move between threads).
template <class Fn>
struct Gate;
template <class... A>
struct Gate<sy_status (*)(sy_backend_t, A...)> {
  using Fn = sy_status (*)(sy_backend_t, A...);
  template <Fn sy_backend_iface::*M>
  static sy_status call(sy_backend_t h, A... a) {
    if (!h) return (shared().*M)(h, a...);
    GpuBackend* be = gpu_of(h);
    if (!be->available()) {
      set_error(h, "no device");
      return SY_ERR_UNAVAILABLE;
    }
    if (cudaSetDevice(be->device()) != cudaSuccess) {
      (void)cudaGetLastError();
      set_error(h, "cannot select the backend's device");
      return SY_ERR_DEVICE;
    }
    return (inner().*M)(h, a...);
  }
};
#define SY_GATE(table, op) \
  (table).op = &Gate<decltype(sy_backend_iface::op)>::call<&sy_backend_iface::op>

sy_status create_thunk(const sy_param* params, size_t n_params, sy_backend_t* out);
extern const sy::plugin::PluginDesc kDesc;

const sy_backend_iface& shared() {
  static const sy_backend_iface t = sy::plugin::make_backend_iface(&create_thunk, kDesc);
  return t;
}

const sy_backend_iface& inner() {
  static const sy_backend_iface t = [] {
    sy_backend_iface r = shared();
    r.device_info = &device_info;
    r.buffer_alloc = &buffer_alloc;
    r.buffer_from_host = nullptr;  // no zero-copy wrapping: the host uploads instead
    r.buffer_free = &buffer_free;
    r.buffer_host_ptr = &buffer_host_ptr;
    r.buffer_write = &buffer_write;
    r.buffer_read = &buffer_read;
    r.synchronize = &synchronize;
    return r;
  }();
  return t;
}

sy_backend_iface gated_iface() {
  sy_backend_iface t = inner();
  SY_GATE(t, buffer_alloc);
  SY_GATE(t, buffer_write);
  SY_GATE(t, buffer_read);
  SY_GATE(t, synchronize);
#define SY_GATE_OP(name, group, params, args) \
  if (t.name) SY_GATE(t, name);
  SY_BACKEND_OPS(SY_GATE_OP)
#undef SY_GATE_OP
  return t;
}

const char* const kKnownParams[] = {"device", nullptr};

SY_PLUGIN_NOTE(SY_PLUGIN_BACKEND, SY_GPU_PLUGIN_NAME, "0.1.0", SY_CAP_ASYNC, SY_GPU_DESCRIPTION);

extern const sy::plugin::PluginDesc kDesc = {
    sy_plugin_note_.name,
    sy_plugin_note_.version,
    sy_plugin_note_.description,
    sy_plugin_note_.capabilities_lo,
    sy::gpu::kWeightDtypes,
    kKnownParams,
    &sy::gpu::make_backend,
    /*hybrid_ops=*/true,
    /*device_memory=*/true,
    /*load_check=*/nullptr,
    /*kv_dtypes=*/sy::gpu::kKvDtypes,
    /*omit_ops=*/0,
    /*hybrid2_ops=*/true,
    /*dense2_ops=*/true,
};

sy_status create_thunk(const sy_param* params, size_t n_params, sy_backend_t* out) {
  return sy::plugin::create_backend(kDesc, params, n_params, out);
}

}  // namespace

extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                               sy_plugin_info* info) {
  static const sy_backend_iface iface = gated_iface();
  return sy::plugin::plugin_entry(kDesc, &iface, host_abi_version, host, info);
}
