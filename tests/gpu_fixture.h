// What the GPU tests share: which GPU plugins this build has, a backend handle with upload and
// read helpers, and the "no GPU device" skip rule.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend_fixture.h"

namespace sy::test {

inline bool is_emulator(const std::string& plugin) {
  return plugin.rfind("gpu_emu", 0) == 0;
}

// The GPU plugins this build made (cuda, hip) and, where the emulator is built, gpu_emu (warp
// 32) and gpu_emu64 (wave 64).
inline std::vector<std::string> gpu_plugins(bool with_emulator) {
  std::vector<std::string> names;
  std::stringstream ss(SWITCHYARD_GPU_PLUGINS);
  for (std::string n; std::getline(ss, n, ',');)
    if (!n.empty() && (with_emulator || !is_emulator(n))) names.push_back(n);
  if (names.empty()) names.push_back("none");  // keeps the suites instantiated
  return names;
}

// The plugin, loaded once: the emulators are test plugins, the others in the plugin directory.
inline LoadedPlugin& gpu_plugin(const std::string& name) {
  if (!is_emulator(name)) return LoadedPlugin::backend(name);
  static std::map<std::string, std::unique_ptr<LoadedPlugin>> loaded;
  auto& slot = loaded[name];
  if (!slot)
    slot = std::make_unique<LoadedPlugin>(std::string(SWITCHYARD_TEST_PLUGIN_DIR) +
                                          "/switchyard_backend_" + name + ".so");
  return *slot;
}

// tests/device/run.sh sets SWITCHYARD_REQUIRE_GPU=1: there a missing device fails the test.
inline bool gpu_required() {
  const char* v = std::getenv("SWITCHYARD_REQUIRE_GPU");
  return v && *v && std::strcmp(v, "0") != 0;
}

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

// In SetUp of a suite over GPU plugins: skip (or, under the device script, fail) without one.
#define SY_SKIP_WITHOUT_GPU(handle)                              \
  do {                                                           \
    if ((handle).info().available == 0) {                        \
      if (::sy::test::gpu_required()) FAIL() << "no GPU device"; \
      GTEST_SKIP() << "no GPU device";                           \
    }                                                            \
  } while (0)
