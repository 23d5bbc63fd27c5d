// RAII over one sy_backend_t: buffers, tensor descriptors, and ops that throw BackendError with
// the plugin's last_error on failure.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/plugin_host.h"
#include "switchyard/abi/backend.h"

namespace sy {

class BackendError : public std::runtime_error {
 public:
  BackendError(sy_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  sy_status status() const { return status_; }

 private:
  sy_status status_;
};

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
  // Throws BackendError("<plugin>: <op>: <last_error>") when st != SY_OK.
  void check(sy_status st, const char* op) const;
  // Names of 1.0 ops the table leaves NULL.
  std::vector<std::string> missing_ops() const;
  // Names of the 1.1 hybrid ops (SSM: ssm_conv, ssm_scan; MoE: moe_gate, moe_matmul,
  // moe_combine) that are NULL or beyond the plugin table's struct_size.
  std::vector<std::string> missing_hybrid_ops(bool ssm, bool moe) const;
  // Names of the 1.3 model ops (rope_ext; bias_scale) asked for that are NULL or beyond the
  // plugin table's struct_size.
  std::vector<std::string> missing_model_ops(bool rope_ext, bool bias_scale) const;

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
