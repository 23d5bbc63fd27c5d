// Loads backend plugins with dlopen behind a minimal sy_host_api. A stand-in for the host's
// plugin loader (being written in core/), kept in this one header so tests can swap it later.
#pragma once

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
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

inline const sy_host_api* test_host_api() {
  static const sy_host_api api = {sizeof(sy_host_api), SY_ABI_VERSION, &test_log, &test_now_ns,
                                  &test_counter_add};
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

}  // namespace sy::test
