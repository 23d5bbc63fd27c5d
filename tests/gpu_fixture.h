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

}  // namespace sy::test

// In SetUp of a suite over GPU plugins: skip (or, under the device script, fail) without one.
#define SY_SKIP_WITHOUT_GPU(handle)                              \
  do {                                                           \
    if ((handle).info().available == 0) {                        \
      if (::sy::test::gpu_required()) FAIL() << "no GPU device"; \
      GTEST_SKIP() << "no GPU device";                           \
    }                                                            \
  } while (0)
