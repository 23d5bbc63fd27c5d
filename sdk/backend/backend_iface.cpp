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

#include <sys/mman.h>

#include "cpu_device_info.h"
#include "op_checks.h"
#include "switchyard/common/backend_ops.h"
#include "switchyard/sdk/backend.h"

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

[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(sy_status s, const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  throw Error(s, buf);
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
  return be ? be->last_error.c_str() : create_error();
}

sy_status device_info(sy_backend_t handle, sy_device_info* out) {
  return guarded(handle, "device_info", [&](Backend& be) {
    copy_device_info(cpu_device_info(be.desc->weight_dtypes, be.desc->kv_dtypes), out);
  });
}

// Memory for an owned buffer, freed by std::free. Buffers of 2 MiB and more (weights, caches)
// start on a huge-page boundary and ask for huge pages: writing a packed copy of a 1B-parameter
// file otherwise spends as long in 4 KiB page faults as in the packing itself.
void* allocate_owned(uint64_t bytes) {
  constexpr uint64_t kHuge = 2u << 20;
  if (bytes < kHuge) return std::aligned_alloc(64, bytes);
  void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
  if (p) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages still work
  return p;
}

// A new owned buffer of `size` bytes, 64-byte aligned, the size rounded up as aligned_alloc
// requires (one line for size 0); fill(data) runs before it is registered. Errors name `op`.
template <class Fill>
Buffer* add_owned_buffer(Backend& be, const char* op, uint64_t size, Fill&& fill) {
  const uint64_t bytes = size == 0 ? 64 : (size + 63) / 64 * 64;
  void* p = size <= UINT64_MAX - 64 ? allocate_owned(bytes) : nullptr;
  if (!p) fail(SY_ERR_OUT_OF_MEMORY, "%s: cannot allocate %" PRIu64 " bytes", op, size);
  try {
    fill(p);
    return add_buffer(be, p, size, true);
  } catch (...) {
    std::free(p);
    throw;
  }
}

sy_status buffer_alloc(sy_backend_t handle, uint64_t size, sy_buffer_t* out) {
  return guarded(handle, "buffer_alloc", [&](Backend& be) {
    if (!out) fail(SY_ERR_INVALID_ARG, "buffer_alloc: out is NULL");
    *out = handle_of(add_owned_buffer(be, "buffer_alloc", size, [](void*) {}));
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
  // Queued work may read or write this buffer. buffer_free returns nothing: a failure is logged.
  if (guarded(handle, "buffer_free", [](Backend& live) { live.flush(); }) != SY_OK)
    log_to_host(SY_LOG_WARN, be->last_error.c_str());
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
  guarded(handle, "buffer_host_ptr", [&](Backend& be) {
    be.flush();  // the caller may read through the pointer at once
    Buffer* b = live_buffer(be, "buffer_host_ptr", buffer);
    if (b->packed) fail(SY_ERR_INVALID_ARG, "buffer_host_ptr: the buffer holds a packed weight");
    p = b->data;
  });
  return p;
}

sy_status buffer_write(sy_backend_t handle, sy_buffer_t buffer, uint64_t offset, const void* src,
                       uint64_t size) {
  return guarded(handle, "buffer_write", [&](Backend& be) {
    Buffer* b = transfer_buffer(be, "buffer_write", buffer, src, "src", offset, size);
    be.flush();
    if (size > 0) std::memmove((char*)b->data + offset, src, size);  // src may be wrapped memory
  });
}

sy_status buffer_read(sy_backend_t handle, sy_buffer_t buffer, uint64_t offset, void* dst,
                      uint64_t size) {
  return guarded(handle, "buffer_read", [&](Backend& be) {
    Buffer* b = transfer_buffer(be, "buffer_read", buffer, dst, "dst", offset, size);
    be.flush();
    if (size > 0) std::memmove(dst, (const char*)b->data + offset, size);
  });
}

sy_status synchronize(sy_backend_t handle) {
  return guarded(handle, "synchronize", [](Backend& be) { be.flush(); });
}

// Each op's validation, then its kernel: the body of the op's thunk below.
namespace run {

void get_rows(Backend& be, const sy_tensor* table, const int32_t* ids, uint32_t n,
              const sy_tensor* dst) {
  auto a = checks::get_rows(be, table, ids, n, dst);
  be.get_rows(a.table, ids, a.dst);
}
void matmul(Backend& be, const sy_tensor* x, const sy_tensor* w, const sy_tensor* y) {
  auto a = checks::matmul(be, x, w, y);
  if (a.y.nelements() > 0) be.matmul(a.x, a.w, a.y);
}
void rms_norm(Backend& be, const sy_tensor* x, const sy_tensor* w, float eps, const sy_tensor* y) {
  auto a = checks::rms_norm(be, x, w, eps, y);
  be.rms_norm(a.x, a.w, eps, a.y);
}
void rope(Backend& be, const sy_tensor* x, const int32_t* pos, uint32_t n_rot, float freq_base,
          float freq_scale, uint32_t mode) {
  Tensor t = checks::rope(be, x, pos, n_rot, freq_base, freq_scale, mode);
  be.rope(t, pos, n_rot, freq_base, freq_scale, mode);
}
void add(Backend& be, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y) {
  auto r = checks::add(be, a, b, y);
  be.add(r.a, r.b, r.y);
}
void swiglu(Backend& be, const sy_tensor* gate, const sy_tensor* up, const sy_tensor* y) {
  auto r = checks::swiglu(be, gate, up, y);
  be.swiglu(r.a, r.b, r.y);
}
void softmax(Backend& be, const sy_tensor* x, const sy_tensor* y) {
  auto a = checks::softmax(be, x, y);
  be.softmax(a.x, a.y);
}
void moe_combine(Backend& be, const sy_tensor* x, const sy_tensor* weights, const sy_tensor* y) {
  auto r = checks::moe_combine(be, x, weights, y);
  be.moe_combine(r.a, r.b, r.y);
}
void mul(Backend& be, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y) {
  auto r = checks::mul(be, a, b, y);
  be.mul(r.a, r.b, r.y);
}
// The ops with an argument struct: validated into the Op the virtual takes.
#define SY_RUN_ARGS_OP(name, type) \
  void name(Backend& be, const type* args) { be.name(checks::name(be, args)); }
SY_RUN_ARGS_OP(kv_store, sy_kv_store_args)
SY_RUN_ARGS_OP(attention, sy_attention_args)
SY_RUN_ARGS_OP(ssm_conv, sy_ssm_conv_args)
SY_RUN_ARGS_OP(ssm_scan, sy_ssm_scan_args)
SY_RUN_ARGS_OP(moe_gate, sy_moe_gate_args)
SY_RUN_ARGS_OP(moe_matmul, sy_moe_matmul_args)
SY_RUN_ARGS_OP(rope_ext, sy_rope_ext_args)
SY_RUN_ARGS_OP(bias_scale, sy_bias_scale_args)
SY_RUN_ARGS_OP(ssm_scan2, sy_ssm_scan2_args)
SY_RUN_ARGS_OP(gated_delta_net, sy_gated_delta_net_args)
SY_RUN_ARGS_OP(norm, sy_norm_args)
SY_RUN_ARGS_OP(unary, sy_unary_args)
SY_RUN_ARGS_OP(swiglu_oai, sy_swiglu_oai_args)
#undef SY_RUN_ARGS_OP

// A new owned, 64-byte aligned buffer marked packed, or none when the backend keeps w as it is.
void weight_pack(Backend& be, const sy_tensor* w, sy_buffer_t* out) {
  const Tensor t = checks::weight_pack(be, w, out);
  const uint64_t size = be.packed_size(t);
  if (size == 0) return;
  Buffer* b = add_owned_buffer(be, "weight_pack", size, [&](void* p) { be.pack_weight(t, p); });
  b->packed = true;
  *out = handle_of(b);
}

}  // namespace run

#define SY_EXPAND(...) __VA_ARGS__
// One C thunk per op of the list: the boundary around run::<op>. Every op but matmul first
// completes the matmuls a backend deferred (Backend::flush).
#define SY_OP_THUNK(name, group, params, args)               \
  sy_status name##_thunk(sy_backend_t h, SY_EXPAND params) { \
    return guarded(h, #name, [&](Backend& be) {              \
      if (OpIndex::name != OpIndex::matmul) be.flush();      \
      run::name(be, SY_EXPAND args);                         \
    });                                                      \
  }
SY_BACKEND_OPS(SY_OP_THUNK)
#undef SY_OP_THUNK

// The list must reach the end of the table: an appended op needs its line in backend_ops.h.
static_assert(offsetof(sy_backend_iface, SY_BACKEND_OP_LAST) + sizeof(void*) ==
                  sizeof(sy_backend_iface),
              "sy_backend_iface grew: add the new op to SY_BACKEND_OPS (backend_ops.h)");

}  // namespace

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

Buffer* transfer_buffer(Backend& be, const char* op, sy_buffer_t handle, const void* host,
                        const char* host_name, uint64_t offset, uint64_t size) {
  Buffer* b = live_buffer(be, op, handle);
  if (b->packed) fail(SY_ERR_INVALID_ARG, "%s: the buffer holds a packed weight", op);
  if (!host && size > 0) fail(SY_ERR_INVALID_ARG, "%s: %s is NULL", op, host_name);
  check_range(op, *b, offset, size);
  return b;
}

void copy_device_info(const sy_device_info& d, sy_device_info* out) {
  if (!out) fail(SY_ERR_INVALID_ARG, "device_info: out is NULL");
  const uint32_t size = out->struct_size;
  if (size < 2 * sizeof(uint32_t))
    fail(SY_ERR_INVALID_ARG, "device_info: out has struct_size %u, expected at least %zu", size,
         2 * sizeof(uint32_t));
  std::memcpy((char*)out + sizeof(uint32_t), (const char*)&d + sizeof(uint32_t),
              std::min<size_t>(size, sizeof d) - sizeof(uint32_t));
}

uint64_t omitted_ops(const PluginDesc& desc) {
  constexpr uint64_t kHybrid = op_bit(OpIndex::ssm_conv) | op_bit(OpIndex::ssm_scan) |
                               op_bit(OpIndex::moe_gate) | op_bit(OpIndex::moe_matmul) |
                               op_bit(OpIndex::moe_combine);
  constexpr uint64_t kHybrid2 = op_bit(OpIndex::ssm_scan2) | op_bit(OpIndex::gated_delta_net) |
                                op_bit(OpIndex::norm) | op_bit(OpIndex::mul) |
                                op_bit(OpIndex::unary);
  constexpr uint64_t kDense2 = op_bit(OpIndex::swiglu_oai);
  return desc.omit_ops | (desc.hybrid_ops ? 0 : kHybrid) | (desc.hybrid2_ops ? 0 : kHybrid2) |
         (desc.dense2_ops ? 0 : kDense2);
}

sy_backend_iface make_backend_iface(sy_status (*create)(const sy_param*, size_t, sy_backend_t*),
                                    const PluginDesc& desc) {
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
  const uint64_t omit = omitted_ops(desc);
#define SY_OP_SLOT(name, group, params, args) \
  if (!(omit & op_bit(OpIndex::name))) t.name = &name##_thunk;
  SY_BACKEND_OPS(SY_OP_SLOT)
#undef SY_OP_SLOT
  return t;
}

}  // namespace sy::plugin
