// Device selection and the capability report. With no device (none visible, no driver, or a
// runtime error) the backend is still created, so the host can read device_info and fall back.
#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "blas.h"
#include "device.h"
#include "gpu_backend.h"

namespace sy::gpu {
namespace {

constexpr const char* kNoDevice = "no " SY_GPU_RUNTIME " device";

void copy_text(char* dst, size_t cap, const std::string& s) {
  std::snprintf(dst, cap, "%s", s.c_str());
}

// The "device" param: a device index, 0 when absent.
int device_param(const plugin::Params& params) {
  const std::string* v = plugin::find_param(params, "device");
  if (!v) return 0;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0 || n < 0 || n > 1023)
    throw plugin::Error(SY_ERR_INVALID_ARG,
                        "create: param device='" + *v + "' must be an integer in [0, 1023]");
  return (int)n;
}

// Keeps this plugin mapped for the process's lifetime once it holds a device context: the
// runtime's threads and exit handlers must not outlive the code they run.
void pin_plugin() {
  static const bool pinned = [] {
    Dl_info info;
    return dladdr(reinterpret_cast<void*>(&pin_plugin), &info) && info.dli_fname &&
           dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
}

}  // namespace

std::unique_ptr<plugin::Backend> make_backend(const plugin::Params& params) {
  const int want = device_param(params);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    (void)cudaGetLastError();  // clear the sticky error
    plugin::log_to_host(SY_LOG_INFO,
                        std::string("create: ") + kNoDevice + " (cudaGetDeviceCount: " +
                            (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")");
    return std::make_unique<GpuBackend>(kNoDevice);
  }
  if (want >= count)
    throw plugin::Error(SY_ERR_INVALID_ARG, "create: param device=" + std::to_string(want) +
                                                " but only " + std::to_string(count) +
                                                " " SY_GPU_RUNTIME " device(s) are visible");
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, want), "create: device properties");
  if (prop.warpSize != SY_WARP)
    return std::make_unique<GpuBackend>(SY_GPU_RUNTIME " device " + std::to_string(want) +
                                        " has warp size " + std::to_string(prop.warpSize) +
                                        ", built for " + std::to_string(SY_WARP));
  return std::make_unique<GpuBackend>(want, prop);
}

GpuBackend::GpuBackend(std::string reason) : available_(false), name_(std::move(reason)) {}

GpuBackend::GpuBackend(int device, const cudaDeviceProp& prop)
    : available_(true), name_(prop.name), device_(device) {
  check(cudaSetDevice(device), "create: set device");
  pin_plugin();
  try {
    init_memory();
  } catch (...) {
    release_memory();  // the destructor does not run for a half-built object
    throw;
  }
  std::string why;
  blas_ = Blas::load(compute_, &why);
  char line[320];
  std::snprintf(line, sizeof line,
                "create: " SY_GPU_RUNTIME " device %d: %s (arch %d.%d, %d units, %.1f GiB); %s%s",
                device, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                (double)prop.totalGlobalMem / (1ull << 30),
                blas_ ? "matmul through " : "built-in tiled matmul: ",
                blas_ ? blas_->name().c_str() : why.c_str());
  plugin::log_to_host(SY_LOG_INFO, line);
}

GpuBackend::~GpuBackend() {
  if (!available_) return;
  (void)cudaSetDevice(device_);
  blas_.reset();
  release_memory();
}

sy_device_info GpuBackend::info() const {
  sy_device_info d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kind = SY_DEVICE_GPU;
  d.available = available_ ? 1 : 0;
  copy_text(d.name, sizeof d.name, name_);
  copy_text(d.vendor, sizeof d.vendor, SY_GPU_VENDOR);
  d.weight_dtypes = kWeightDtypes;
  d.kv_dtypes = kKvDtypes;
  if (available_) {
    (void)cudaSetDevice(device_);  // device_info is not gated: this thread may be on another
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      d.memory_total = total_bytes;
      d.memory_free = free_bytes;
    } else {
      (void)cudaGetLastError();
    }
  }
  return d;
}

}  // namespace sy::gpu
