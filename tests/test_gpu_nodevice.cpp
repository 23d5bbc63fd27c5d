// The cuda and hip plugins on a machine without a usable GPU (CTest hides any GPU through
// CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, so this runs the same
// everywhere): they load, report "no device" through device_info, refuse every op with
// SY_ERR_UNAVAILABLE, and a variant falls back to its configured CPU backend or refuses to start.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "config/config.h"
#include "engine/variant.h"
#include "gpu_fixture.h"
#include "host/log.h"
#include "log_capture.h"
#include "modelgen/generator.h"
#include "switchyard/common/dtype.h"

namespace fs = std::filesystem;

namespace {

using sy::test::Handle;

// Hides every GPU before any runtime starts (this runs before main), so a GPU machine tests the
// no-device path too.
const bool g_gpus_hidden = [] {
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"})
    setenv(var, "-1", 1);
  return true;
}();

struct Vendor {
  const char* runtime;  // in "no CUDA device"
  const char* vendor;
};
Vendor vendor_of(const std::string& plugin) {
  return plugin == "hip" ? Vendor{"HIP", "AMD"} : Vendor{"CUDA", "NVIDIA"};
}

class NoDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "none") GTEST_SKIP() << "no GPU plugin in this build";
  }
  const sy_backend_iface& api() { return sy::test::gpu_plugin(GetParam()).iface(); }
};

std::string name_of(const ::testing::TestParamInfo<std::string>& p) {
  return p.param;
}

TEST_P(NoDevice, PluginLoadsAndAdvertisesAsyncWithoutZeroCopy) {
  const sy_plugin_info& info = sy::test::gpu_plugin(GetParam()).info();
  EXPECT_EQ(std::string(info.name), GetParam());
  EXPECT_EQ(info.abi_version, SY_ABI_VERSION);
  EXPECT_EQ(info.capabilities, (uint64_t)SY_CAP_ASYNC);
  EXPECT_EQ(api().struct_size, sizeof(sy_backend_iface));
  EXPECT_EQ(api().buffer_from_host, nullptr);
  for (const void* fn : {(const void*)api().ssm_conv, (const void*)api().ssm_scan,
                         (const void*)api().moe_gate, (const void*)api().moe_matmul,
                         (const void*)api().moe_combine, (const void*)api().attention})
    EXPECT_NE(fn, nullptr);
}

TEST_P(NoDevice, DeviceInfoSaysNoDevice) {
  Handle h(api());
  ASSERT_EQ(h.status(), SY_OK) << api().last_error(nullptr);
  const sy_device_info d = h.info();
  const Vendor v = vendor_of(GetParam());
  EXPECT_EQ(d.kind, (uint32_t)SY_DEVICE_GPU);
  EXPECT_EQ(d.available, 0u);
  EXPECT_EQ(std::string(d.name), std::string("no ") + v.runtime + " device");
  EXPECT_EQ(std::string(d.vendor), v.vendor);
  EXPECT_EQ(d.memory_total, 0u);
  EXPECT_EQ(d.memory_free, 0u);
  EXPECT_EQ(d.weight_dtypes, sy::dtype::weight_mask());  // every type of the dtype table
  // Any device index is accepted when there is no device at all.
  const sy_param p = {"device", "3"};
  Handle h3(api(), {p});
  EXPECT_EQ(h3.status(), SY_OK);
}

TEST_P(NoDevice, EveryCallButDeviceInfoIsUnavailable) {
  Handle h(api());
  ASSERT_EQ(h.status(), SY_OK);
  const sy_backend_iface& a = api();
  sy_backend_t b = h.get();
  auto expect = [&](sy_status st, const char* op) {
    EXPECT_EQ(st, SY_ERR_UNAVAILABLE) << op;
    EXPECT_EQ(h.error(), "no device") << op;
    a.device_info(b, nullptr);  // replaces last_error, so each op is checked on its own
  };
  sy_buffer_t buf = nullptr;
  char bytes[8] = {};
  sy_tensor t{};
  sy_kv_store_args kv{};
  sy_attention_args at{};
  sy_ssm_conv_args sc{};
  sy_ssm_scan_args ss{};
  sy_moe_gate_args mg{};
  sy_moe_matmul_args mm{};
  expect(a.buffer_alloc(b, 64, &buf), "buffer_alloc");
  EXPECT_EQ(buf, nullptr);
  expect(a.buffer_write(b, buf, 0, bytes, 8), "buffer_write");
  expect(a.buffer_read(b, buf, 0, bytes, 8), "buffer_read");
  expect(a.synchronize(b), "synchronize");
  expect(a.get_rows(b, &t, nullptr, 0, &t), "get_rows");
  expect(a.matmul(b, &t, &t, &t), "matmul");
  expect(a.rms_norm(b, &t, &t, 1e-5f, &t), "rms_norm");
  expect(a.rope(b, &t, nullptr, 2, 1e4f, 1.0f, SY_ROPE_NORM), "rope");
  expect(a.add(b, &t, &t, &t), "add");
  expect(a.swiglu(b, &t, &t, &t), "swiglu");
  expect(a.softmax(b, &t, &t), "softmax");
  expect(a.kv_store(b, &kv), "kv_store");
  expect(a.attention(b, &at), "attention");
  expect(a.ssm_conv(b, &sc), "ssm_conv");
  expect(a.ssm_scan(b, &ss), "ssm_scan");
  expect(a.moe_gate(b, &mg), "moe_gate");
  expect(a.moe_matmul(b, &mm), "moe_matmul");
  expect(a.moe_combine(b, &t, &t, &t), "moe_combine");
  EXPECT_EQ(a.buffer_host_ptr(b, buf), nullptr);
}

TEST_P(NoDevice, BadCallsNameTheProblem) {
  const sy_param p = {"device", "first"};
  sy_backend_t b = nullptr;
  EXPECT_EQ(api().create(&p, 1, &b), SY_ERR_INVALID_ARG);
  EXPECT_EQ(b, nullptr);
  EXPECT_STREQ(api().last_error(nullptr),
               "create: param device='first' must be an integer in [0, 1023]");
  sy_device_info d{};
  d.struct_size = sizeof d;
  EXPECT_EQ(api().device_info(nullptr, &d), SY_ERR_INVALID_ARG);
  EXPECT_STREQ(api().last_error(nullptr), "device_info: backend is NULL");
  EXPECT_EQ(api().matmul(nullptr, nullptr, nullptr, nullptr), SY_ERR_INVALID_ARG);
  EXPECT_STREQ(api().last_error(nullptr), "matmul: backend is NULL");
}

INSTANTIATE_TEST_SUITE_P(Gpu, NoDevice, ::testing::ValuesIn(sy::test::gpu_plugins(false)), name_of);

// ---- the host's fallback ----

const fs::path& tiny_model() {
  static const fs::path p = [] {
    fs::path f = fs::path(testing::TempDir()) / "sy-gpu-fallback-dense-tiny.gguf";
    sy::model::write_random_llama(sy::model::preset_shape("dense-tiny"), "f32", 1, f);
    return f;
  }();
  return p;
}

sy::Config variant_config(const std::string& backend) {
  sy::Config c;
  c.origin = "test";
  c.model.path = tiny_model().string();
  c.backend.plugin = backend;
  c.scheduler.plugin = "fixed_window";
  c.scheduler.params = {{"max_batch", "2"}, {"wait_window_ms", "0"}};
  c.plugin_dirs = {SWITCHYARD_PLUGIN_DIR};
  c.engine.max_seqs = 2;
  return c;
}

std::vector<std::vector<int32_t>> greedy(sy::engine::Variant& v) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < 2; ++i) {
    sy::engine::RequestSpec spec;
    spec.prompt = {5, 17, 99, (int32_t)(3 + i)};
    spec.max_new_tokens = 10;
    spec.stop_at_eos = false;
    ids.push_back(v.engine->submit(spec));
  }
  v.engine->run_until_idle();
  std::vector<std::vector<int32_t>> out;
  for (auto id : ids) out.push_back(v.engine->request(id).output);
  return out;
}

using sy::test::LogCapture;

class Fallback : public NoDevice {};

TEST_P(Fallback, RunsOnTheFallbackWithTheSameGreedyTokens) {
  sy::Config c = variant_config(GetParam());
  c.backend.fallback = "cpu_onednn";
  c.backend.params = {{"device", "0"}};  // the GPU plugin's param; the fallback gets defaults
  LogCapture log;
  auto v = sy::engine::Variant::build(c);
  EXPECT_EQ(v->backend_plugin->name(), "cpu_onednn");
  EXPECT_NE(log.text().find("[warning] backend " + GetParam() + " reports no usable device (no " +
                            vendor_of(GetParam()).runtime +
                            " device); falling back to backend cpu_onednn"),
            std::string::npos)
      << log.text();
  auto direct = sy::engine::Variant::build(variant_config("cpu_onednn"));
  const auto got = greedy(*v), want = greedy(*direct);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[0].size(), 10u);
}

TEST_P(Fallback, RequireDeviceRefusesToStart) {
  sy::Config c = variant_config(GetParam());
  c.backend.fallback = "cpu_onednn";
  c.backend.require_device = true;
  try {
    sy::engine::Variant::build(c);
    FAIL() << "built without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "backend " + GetParam() + " reports no usable device (no " +
                                         vendor_of(GetParam()).runtime +
                                         " device) and [backend] require_device is true");
  }
  c.backend.require_device = false;
  c.backend.fallback.clear();
  try {
    sy::engine::Variant::build(c);
    FAIL() << "built without a device or a fallback";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "backend " + GetParam() + " reports no usable device (no " +
                                         vendor_of(GetParam()).runtime +
                                         " device) and [backend] names no fallback");
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, Fallback, ::testing::ValuesIn(sy::test::gpu_plugins(false)), name_of);

TEST(GpuFallback, AFallbackWithoutADeviceEither) {
  const auto plugins = sy::test::gpu_plugins(false);
  if (plugins.size() < 2) GTEST_SKIP() << "needs both the cuda and the hip plugin";
  sy::Config c = variant_config("cuda");
  c.backend.fallback = "hip";
  try {
    sy::engine::Variant::build(c);
    FAIL() << "built without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "backend cuda reports no usable device (no CUDA device), and so does its fallback "
              "hip (no HIP device)");
  }
}

TEST(GpuConfig, FallbackAndRequireDeviceAreHostKeys) {
  const sy::Config c = sy::parse_config(R"(
[model]
path = "m.gguf"
[backend]
plugin = "cuda"
device = 1
fallback = "cpu_onednn"
require_device = true
[scheduler]
plugin = "fixed_window"
)",
                                        "gpu.toml");
  EXPECT_EQ(c.backend.fallback, "cpu_onednn");
  EXPECT_TRUE(c.backend.require_device);
  EXPECT_EQ(c.backend.params, (sy::Params{{"device", "1"}}));
  try {
    sy::parse_config(
        "[model]\npath = \"m.gguf\"\n[backend]\nplugin = \"cuda\"\n"
        "require_device = \"yes\"\n[scheduler]\nplugin = \"fixed_window\"\n",
        "bad.toml");
    FAIL();
  } catch (const sy::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "bad.toml:5:18: backend.require_device: expected a boolean, got string");
  }
}

}  // namespace
