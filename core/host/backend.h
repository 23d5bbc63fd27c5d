// RAII over one sy_backend_t: buffers, tensor descriptors, and ops that throw sy::Error with
// the plugin's status and last_error on failure.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/plugin_host.h"
#include "switchyard/abi/backend.h"
#include "switchyard/common/backend_ops.h"

namespace sy {

using BackendError = Error;  // nothing catches a backend's failure apart from others

using Params = std::vector<std::pair<std::string, std::string>>;

class Backend;

// A device buffer; freed through its backend.
class Buffer {
 public:
  Buffer(Backend* backend, sy_buffer_t handle, uint64_t size)
      : b_(backend), h_(handle), size_(size) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  sy_buffer_t handle() const { return h_; }
  uint64_t size() const { return size_; }
  void write(uint64_t offset, const void* src, uint64_t n);
  void read(uint64_t offset, void* dst, uint64_t n) const;
  void* host_ptr() const;  // nullptr when not host visible

 private:
  Backend* b_;
  sy_buffer_t h_;
  uint64_t size_;
};

inline sy_tensor make_tensor(const Buffer& buf, uint32_t dtype, std::initializer_list<int64_t> ne,
                             uint64_t offset = 0) {
  sy_tensor t{};
  t.struct_size = sizeof(sy_tensor);
  t.dtype = dtype;
  t.buffer = buf.handle();
  t.offset = offset;
  int i = 0;
  for (int64_t d : ne) t.ne[i++] = d;
  for (; i < 4; ++i) t.ne[i] = 1;
  return t;
}

class Backend {
 public:
  Backend(std::shared_ptr<Plugin> plugin, const Params& params);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // The plugin's table; members past its struct_size read as NULL (abi_table.h).
  const sy_backend_iface& api() const { return *api_; }
  sy_backend_t handle() const { return h_; }
  const Plugin& plugin() const { return *plugin_; }
  const sy_device_info& device() const { return device_; }
  // Throws sy::Error(st, "<plugin>: <op>: <last_error>") when st != SY_OK (`threw`: the
  // plugin threw across the ABI, plugin_call.h).
  void check(sy_status st, const char* op, bool threw = false) const;
  // Names of the entries and ops (SY_BACKEND_OPS) a model with `needs` calls that the table
  // leaves NULL (or that lie beyond the plugin table's struct_size), in table order.
  std::vector<std::string> missing_ops(const OpNeeds& needs = {}) const;

  // One call per op of SY_BACKEND_OPS, on this backend's handle: backend.matmul(&x, &w, &y).
  // Throws sy::Error as check() does; SY_ERR_UNSUPPORTED for an op the table leaves NULL.
  void synchronize();
#define SY_HOST_OP_DECL(name, group, params, args) void name params;
  SY_BACKEND_OPS(SY_HOST_OP_DECL)
#undef SY_HOST_OP_DECL

  std::unique_ptr<Buffer> alloc(uint64_t size);
  // Zero-copy when the backend can wrap host memory, else a device copy.
  std::unique_ptr<Buffer> from_host(void* ptr, uint64_t size);

 private:
  std::shared_ptr<Plugin> plugin_;
  const sy_backend_iface* api_;
  sy_backend_t h_ = nullptr;
  sy_device_info device_{};
};

}  // namespace sy
