// The sy_backend_iface thunks: handle checks, exception fencing, buffers, and validation before
// the plugin's kernels run.
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "backend_plugin_util.h"
#include "cpu_device_info.h"
#include "op_checks.h"
#include "plugin_internal.h"

namespace sy::plugin {
namespace {

Backend* backend_of(sy_backend_t b) {
  return reinterpret_cast<Backend*>(b);
}
Buffer* buffer_of(sy_buffer_t b) {
  return reinterpret_cast<Buffer*>(b);
}
sy_buffer_t handle_of(Buffer* b) {
  return reinterpret_cast<sy_buffer_t>(b);
}

// Runs f(backend) so that no exception crosses the C boundary and every failure leaves its
// message in the handle's last_error (or the thread's, for a NULL handle).
template <class F>
sy_status guarded(sy_backend_t handle, const char* op, F&& f) noexcept {
  Backend* be = backend_of(handle);
  // "op: what[: detail]" via snprintf: building a std::string could throw inside a handler.
  auto set = [be, op](const char* what, const char* detail) noexcept {
    char message[512];
    std::snprintf(message, sizeof message, "%s: %s%s%s", op, what, detail ? ": " : "",
                  detail ? detail : "");
    if (be)
      internal::set_error(be->last_error, message);
    else
      internal::set_thread_error(message);
  };
  try {
    if (!be) throw PluginError(SY_ERR_INVALID_ARG, std::string(op) + ": backend is NULL");
    f(*be);
    return SY_OK;
  } catch (const PluginError& e) {
    if (be)  // the message already names the op
      internal::set_error(be->last_error, e.what());
    else
      internal::set_thread_error(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    set("out of memory", nullptr);
    return SY_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set("internal error", e.what());
    return SY_ERR_INTERNAL;
  } catch (...) {
    set("internal error", "unknown exception");
    return SY_ERR_INTERNAL;
  }
}

[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(sy_status s, const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  throw PluginError(s, buf);
}

Buffer* live_buffer(Backend& be, const char* op, sy_buffer_t handle) {
  Buffer* b = buffer_of(handle);
  if (!b || !be.buffers.count(b))
    fail(SY_ERR_INVALID_ARG, "%s: buffer is not a live buffer of this backend", op);
  return b;
}

void check_range(const char* op, const Buffer& b, uint64_t offset, uint64_t size) {
  if (offset > b.size || size > b.size - offset)
    fail(SY_ERR_INVALID_ARG,
         "%s: %" PRIu64 " bytes at offset %" PRIu64 " exceed the buffer's size %" PRIu64, op, size,
         offset, b.size);
}

Buffer* add_buffer(Backend& be, void* data, uint64_t size, bool owned) {
  auto b = std::make_unique<Buffer>(Buffer{data, size, owned});
  be.buffers.insert(b.get());
  return b.release();
}

void destroy(sy_backend_t handle) {
  try {
    delete backend_of(handle);
  } catch (...) {
  }
}

const char* last_error(sy_backend_t handle) {
  Backend* be = backend_of(handle);
  return be ? be->last_error.c_str() : internal::thread_error();
}

sy_status device_info(sy_backend_t handle, sy_device_info* out) {
  return guarded(handle, "device_info", [&](Backend& be) {
    if (!out) fail(SY_ERR_INVALID_ARG, "device_info: out is NULL");
    const uint32_t size = out->struct_size;
    if (size < 2 * sizeof(uint32_t))
      fail(SY_ERR_INVALID_ARG, "device_info: out has struct_size %u, expected at least %zu", size,
           2 * sizeof(uint32_t));
    sy_device_info d = cpu_device_info(be.desc->weight_dtypes, be.desc->kv_dtypes);
    // Only what the caller's struct covers; its struct_size stays the caller's.
    std::memcpy((char*)out + sizeof(uint32_t), (const char*)&d + sizeof(uint32_t),
                std::min<size_t>(size, sizeof d) - sizeof(uint32_t));
  });
}

sy_status buffer_alloc(sy_backend_t handle, uint64_t size, sy_buffer_t* out) {
  return guarded(handle, "buffer_alloc", [&](Backend& be) {
    if (!out) fail(SY_ERR_INVALID_ARG, "buffer_alloc: out is NULL");
    // 64-byte aligned, the size rounded up as aligned_alloc requires (one line for size 0).
    const uint64_t bytes = size == 0 ? 64 : (size + 63) / 64 * 64;
    void* p = size <= UINT64_MAX - 64 ? std::aligned_alloc(64, bytes) : nullptr;
    if (!p) fail(SY_ERR_OUT_OF_MEMORY, "buffer_alloc: cannot allocate %" PRIu64 " bytes", size);
    try {
      *out = handle_of(add_buffer(be, p, size, true));
    } catch (...) {
      std::free(p);
      throw;
    }
  });
}

sy_status buffer_from_host(sy_backend_t handle, void* ptr, uint64_t size, sy_buffer_t* out) {
  return guarded(handle, "buffer_from_host", [&](Backend& be) {
    if (!out) fail(SY_ERR_INVALID_ARG, "buffer_from_host: out is NULL");
    if (!ptr && size > 0) fail(SY_ERR_INVALID_ARG, "buffer_from_host: ptr is NULL");
    *out = handle_of(add_buffer(be, ptr, size, false));
  });
}

void buffer_free(sy_backend_t handle, sy_buffer_t buffer) {
  Backend* be = backend_of(handle);
  Buffer* b = buffer_of(buffer);
  if (!be || !b) return;
  if (!be->buffers.erase(b)) {
    log_to_host(SY_LOG_WARN,
                "buffer_free: ignoring a buffer that is not a live buffer of this backend");
    return;
  }
  if (b->owned) std::free(b->data);
  delete b;
}

void* buffer_host_ptr(sy_backend_t handle, sy_buffer_t buffer) {
  void* p = nullptr;
  guarded(handle, "buffer_host_ptr",
          [&](Backend& be) { p = live_buffer(be, "buffer_host_ptr", buffer)->data; });
  return p;
}

sy_status buffer_write(sy_backend_t handle, sy_buffer_t buffer, uint64_t offset, const void* src,
                       uint64_t size) {
  return guarded(handle, "buffer_write", [&](Backend& be) {
    Buffer* b = live_buffer(be, "buffer_write", buffer);
    if (!src && size > 0) fail(SY_ERR_INVALID_ARG, "buffer_write: src is NULL");
    check_range("buffer_write", *b, offset, size);
    if (size > 0) std::memmove((char*)b->data + offset, src, size);  // src may be wrapped memory
  });
}

sy_status buffer_read(sy_backend_t handle, sy_buffer_t buffer, uint64_t offset, void* dst,
                      uint64_t size) {
  return guarded(handle, "buffer_read", [&](Backend& be) {
    Buffer* b = live_buffer(be, "buffer_read", buffer);
    if (!dst && size > 0) fail(SY_ERR_INVALID_ARG, "buffer_read: dst is NULL");
    check_range("buffer_read", *b, offset, size);
    if (size > 0) std::memmove(dst, (const char*)b->data + offset, size);
  });
}

sy_status synchronize(sy_backend_t handle) {
  return guarded(handle, "synchronize", [](Backend&) {});  // every op completes before returning
}

sy_status get_rows(sy_backend_t h, const sy_tensor* table, const int32_t* ids, uint32_t n,
                   const sy_tensor* dst) {
  return guarded(h, "get_rows", [&](Backend& be) {
    auto a = checks::get_rows(be, table, ids, n, dst);
    be.get_rows(a.table, ids, a.dst);
  });
}

sy_status matmul(sy_backend_t h, const sy_tensor* x, const sy_tensor* w, const sy_tensor* y) {
  return guarded(h, "matmul", [&](Backend& be) {
    auto a = checks::matmul(be, x, w, y);
    if (a.y.nelements() > 0) be.matmul(a.x, a.w, a.y);
  });
}

sy_status rms_norm(sy_backend_t h, const sy_tensor* x, const sy_tensor* w, float eps,
                   const sy_tensor* y) {
  return guarded(h, "rms_norm", [&](Backend& be) {
    auto a = checks::rms_norm(be, x, w, eps, y);
    be.rms_norm(a.x, a.w, eps, a.y);
  });
}

sy_status rope(sy_backend_t h, const sy_tensor* x, const int32_t* pos, uint32_t n_rot,
               float freq_base, float freq_scale, uint32_t mode) {
  return guarded(h, "rope", [&](Backend& be) {
    Tensor t = checks::rope(be, x, pos, n_rot, freq_base, freq_scale, mode);
    be.rope(t, pos, n_rot, freq_base, freq_scale, mode);
  });
}

sy_status add(sy_backend_t h, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y) {
  return guarded(h, "add", [&](Backend& be) {
    auto r = checks::add(be, a, b, y);
    be.add(r.a, r.b, r.y);
  });
}

sy_status swiglu(sy_backend_t h, const sy_tensor* gate, const sy_tensor* up, const sy_tensor* y) {
  return guarded(h, "swiglu", [&](Backend& be) {
    auto r = checks::swiglu(be, gate, up, y);
    be.swiglu(r.a, r.b, r.y);
  });
}

sy_status softmax(sy_backend_t h, const sy_tensor* x, const sy_tensor* y) {
  return guarded(h, "softmax", [&](Backend& be) {
    auto a = checks::softmax(be, x, y);
    be.softmax(a.x, a.y);
  });
}

sy_status kv_store(sy_backend_t h, const sy_kv_store_args* args) {
  return guarded(h, "kv_store", [&](Backend& be) { be.kv_store(checks::kv_store(be, args)); });
}

sy_status attention(sy_backend_t h, const sy_attention_args* args) {
  return guarded(h, "attention", [&](Backend& be) { be.attention(checks::attention(be, args)); });
}

sy_status ssm_conv(sy_backend_t h, const sy_ssm_conv_args* args) {
  return guarded(h, "ssm_conv", [&](Backend& be) { be.ssm_conv(checks::ssm_conv(be, args)); });
}

sy_status ssm_scan(sy_backend_t h, const sy_ssm_scan_args* args) {
  return guarded(h, "ssm_scan", [&](Backend& be) { be.ssm_scan(checks::ssm_scan(be, args)); });
}

sy_status moe_gate(sy_backend_t h, const sy_moe_gate_args* args) {
  return guarded(h, "moe_gate", [&](Backend& be) { be.moe_gate(checks::moe_gate(be, args)); });
}

sy_status moe_matmul(sy_backend_t h, const sy_moe_matmul_args* args) {
  return guarded(h, "moe_matmul",
                 [&](Backend& be) { be.moe_matmul(checks::moe_matmul(be, args)); });
}

sy_status moe_combine(sy_backend_t h, const sy_tensor* x, const sy_tensor* weights,
                      const sy_tensor* y) {
  return guarded(h, "moe_combine", [&](Backend& be) {
    auto r = checks::moe_combine(be, x, weights, y);
    be.moe_combine(r.a, r.b, r.y);
  });
}

sy_status rope_ext(sy_backend_t h, const sy_rope_ext_args* args) {
  return guarded(h, "rope_ext", [&](Backend& be) { be.rope_ext(checks::rope_ext(be, args)); });
}

sy_status bias_scale(sy_backend_t h, const sy_bias_scale_args* args) {
  return guarded(h, "bias_scale",
                 [&](Backend& be) { be.bias_scale(checks::bias_scale(be, args)); });
}

}  // namespace

sy_backend_iface make_backend_iface(sy_status (*create)(const sy_param*, size_t, sy_backend_t*),
                                    bool hybrid_ops) {
  sy_backend_iface t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.create = create;
  t.destroy = &destroy;
  t.last_error = &last_error;
  t.device_info = &device_info;
  t.buffer_alloc = &buffer_alloc;
  t.buffer_from_host = &buffer_from_host;
  t.buffer_free = &buffer_free;
  t.buffer_host_ptr = &buffer_host_ptr;
  t.buffer_write = &buffer_write;
  t.buffer_read = &buffer_read;
  t.synchronize = &synchronize;
  t.get_rows = &get_rows;
  t.matmul = &matmul;
  t.rms_norm = &rms_norm;
  t.rope = &rope;
  t.add = &add;
  t.swiglu = &swiglu;
  t.softmax = &softmax;
  t.kv_store = &kv_store;
  t.attention = &attention;
  t.rope_ext = &rope_ext;
  t.bias_scale = &bias_scale;
  if (hybrid_ops) {
    t.ssm_conv = &ssm_conv;
    t.ssm_scan = &ssm_scan;
    t.moe_gate = &moe_gate;
    t.moe_matmul = &moe_matmul;
    t.moe_combine = &moe_combine;
  }
  return t;
}

}  // namespace sy::plugin
