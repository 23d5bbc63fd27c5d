// Loads backend plugins with dlopen behind a minimal sy_host_api. A stand-in for the host's
// plugin loader (being written in core/), kept in this one header so tests can swap it later.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/abi/plugin.h"

namespace sy::test {

// Messages plugins logged through the test host, as "plugin: message".
inline std::vector<std::string>& host_log() {
  static std::vector<std::string> lines;
  return lines;
}
inline std::mutex& host_log_mutex() {
  static std::mutex m;
  return m;
}

inline void test_log(sy_log_level level, const char* plugin, const char* message) {
  std::fprintf(stderr, "[%s] %d: %s\n", plugin, (int)level, message);
  std::lock_guard<std::mutex> lock(host_log_mutex());
  host_log().push_back(std::string(plugin) + ": " + message);
}
inline int64_t test_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline void test_counter_add(const char*, double) {}
inline void test_counter_add_to(void*, const char*, double) {}

inline const sy_host_api* test_host_api() {
  static const sy_host_api api = {sizeof(sy_host_api), SY_ABI_VERSION,    &test_log,
                                  &test_now_ns,        &test_counter_add, &test_counter_add_to};
  return &api;
}

// One plugin library, opened and entered; closed (after shutdown) on destruction.
class LoadedPlugin {
 public:
  explicit LoadedPlugin(const std::string& path) {
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error("dlopen " + path + ": " + dlerror());
    entry_ = reinterpret_cast<sy_plugin_entry_fn>(dlsym(lib_, SY_PLUGIN_ENTRY_SYMBOL));
    if (!entry_) throw std::runtime_error(path + " has no " SY_PLUGIN_ENTRY_SYMBOL);
    info_ = {};
    info_.struct_size = sizeof info_;
    info_.error_buf = error_;
    info_.error_buf_size = sizeof error_;
    if (entry_(SY_ABI_VERSION, test_host_api(), &info_) != SY_OK)
      throw std::runtime_error(path + ": entry failed: " + error_);
    if (info_.kind != SY_PLUGIN_BACKEND || !info_.iface)
      throw std::runtime_error(path + " is not a backend plugin");
  }
  ~LoadedPlugin() {
    if (info_.shutdown) info_.shutdown();
    dlclose(lib_);
  }
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  sy_plugin_entry_fn entry() const { return entry_; }
  const sy_plugin_info& info() const { return info_; }
  const sy_backend_iface& iface() const {
    return *static_cast<const sy_backend_iface*>(info_.iface);
  }

  // The backend plugin `name` from SWITCHYARD_PLUGIN_DIR, loaded once per process.
  static LoadedPlugin& backend(const std::string& name) {
    static std::map<std::string, std::unique_ptr<LoadedPlugin>> loaded;
    auto& slot = loaded[name];
    if (!slot)
      slot = std::make_unique<LoadedPlugin>(std::string(SWITCHYARD_PLUGIN_DIR) +
                                            "/switchyard_backend_" + name + ".so");
    return *slot;
  }

 private:
  void* lib_ = nullptr;
  sy_plugin_entry_fn entry_ = nullptr;
  sy_plugin_info info_;
  char error_[256] = {};
};

// One backend handle and the buffers made through it.
class Handle {
 public:
  Handle(const sy_backend_iface& api, const std::vector<sy_param>& params = {}) : api_(&api) {
    status_ = api.create(params.data(), params.size(), &h_);
  }
  ~Handle() {
    if (!h_) return;
    for (sy_buffer_t b : bufs_) api_->buffer_free(h_, b);
    api_->destroy(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  sy_status status() const { return status_; }
  sy_backend_t get() const { return h_; }
  const sy_backend_iface& api() const { return *api_; }
  std::string error() const { return api_->last_error(h_); }
  sy_device_info info() const {
    sy_device_info d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    EXPECT_EQ(api_->device_info(h_, &d), SY_OK) << error();
    return d;
  }

  sy_buffer_t alloc(uint64_t size) {
    sy_buffer_t b = nullptr;
    EXPECT_EQ(api_->buffer_alloc(h_, size, &b), SY_OK) << error();
    bufs_.push_back(b);
    return b;
  }
  sy_buffer_t upload(const void* data, uint64_t size) {
    sy_buffer_t b = alloc(size);
    EXPECT_EQ(api_->buffer_write(h_, b, 0, data, size), SY_OK) << error();
    return b;
  }
  static sy_tensor tensor(uint32_t dtype, sy_buffer_t buf, uint64_t offset,
                          std::vector<int64_t> ne) {
    sy_tensor t = {};
    t.struct_size = sizeof t;
    t.dtype = dtype;
    t.buffer = buf;
    t.offset = offset;
    for (int i = 0; i < 4; ++i) t.ne[i] = i < (int)ne.size() ? ne[i] : 1;
    return t;
  }
  // A fresh buffer holding v as a tensor of shape ne (F32 unless dtype says otherwise).
  template <class T>
  sy_tensor make(const std::vector<T>& v, std::vector<int64_t> ne, uint32_t dtype = SY_DTYPE_F32) {
    return tensor(dtype, upload(v.data(), v.size() * sizeof(T)), 0, std::move(ne));
  }
  // weight_pack of w: the packed tensor (freed with the handle), or w when the backend keeps w
  // as it is (*packed says which).
  sy_tensor pack(const sy_tensor& w, bool* packed) {
    sy_buffer_t out = nullptr;
    EXPECT_EQ(api_->weight_pack(h_, &w, &out), SY_OK) << error();
    *packed = out != nullptr;
    if (!out) return w;
    bufs_.push_back(out);
    return tensor(w.dtype, out, 0, {w.ne[0], w.ne[1]});
  }
  sy_tensor zeros(std::vector<int64_t> ne, uint32_t dtype = SY_DTYPE_F32) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    return tensor(dtype, alloc(n * 4), 0, std::move(ne));
  }
  template <class T = float>
  std::vector<T> read(const sy_tensor& t) {
    const int64_t n = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
    std::vector<T> v(n);
    EXPECT_EQ(api_->synchronize(h_), SY_OK) << error();
    EXPECT_EQ(api_->buffer_read(h_, t.buffer, t.offset, v.data(), n * sizeof(T)), SY_OK) << error();
    return v;
  }

 private:
  const sy_backend_iface* api_;
  sy_backend_t h_ = nullptr;
  sy_status status_ = SY_ERR_INTERNAL;
  std::vector<sy_buffer_t> bufs_;
};

}  // namespace sy::test
