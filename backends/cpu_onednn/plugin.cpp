// Entry point of the cpu_onednn plugin: CPU feature check and params, then the AVX2 backend.
#include <dlfcn.h>
#include <sched.h>

#include <thread>

#include "backend_plugin_util.h"
#include "onednn_factory.h"
#include "switchyard/common/dtype.h"

namespace {

using sy::plugin::PluginError;

// libgomp keeps its worker threads parked inside its own code after a parallel region and
// offers no way to join them; unmapping it under them (dlclose of this plugin dropping the last
// reference) would crash. Pinning it keeps those threads' code mapped for the process lifetime.
void pin_openmp_runtime() {
  static const bool pinned =
      dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  (void)pinned;
}

std::unique_ptr<sy::plugin::Backend> make(const sy::plugin::Params& params) {
  __builtin_cpu_init();
  const char* missing = !__builtin_cpu_supports("avx2")   ? "avx2"
                        : !__builtin_cpu_supports("fma")  ? "fma"
                        : !__builtin_cpu_supports("f16c") ? "f16c"
                                                          : nullptr;
  if (missing)
    throw PluginError(SY_ERR_UNAVAILABLE, std::string("create: cpu_onednn needs AVX2, FMA and "
                                                      "F16C but this CPU lacks ") +
                                              missing);
  // Default: the CPUs this process may run on (taskset, a cgroup cpuset), not every core of
  // the machine: replicas pinned to disjoint cores must not each start a team per core.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int allowed = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
  const unsigned hw = allowed > 0 ? unsigned(allowed) : std::thread::hardware_concurrency();
  const int threads = sy::plugin::positive_int_param(params, "threads", hw ? (int)hw : 1, 1024);
  pin_openmp_runtime();
  return sy::cpu_onednn::make_backend(threads);
}

const char* const kKnownParams[] = {"threads", nullptr};

SY_PLUGIN_NOTE(SY_PLUGIN_BACKEND, "cpu_onednn", "0.1.0", SY_CAP_ZERO_COPY_HOST,
               "CPU backend: oneDNN sgemm, AVX2 fused dequantise-and-dot for F16/BF16/Q8_0, "
               "OpenMP");

const sy::plugin::PluginDesc kDesc = {
    sy_plugin_note_.name,
    sy_plugin_note_.version,
    sy_plugin_note_.description,
    sy_plugin_note_.capabilities_lo,
    sy::dtype::weight_mask(),
    kKnownParams,
    &make,
    /*hybrid_ops=*/true,
};

}  // namespace

SY_DEFINE_BACKEND_PLUGIN(kDesc)
