// Entry point of the cpu_onednn plugin: the kernel path (chosen once, at load), params, then
// the AVX2 backend.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cpu_path.h"
#include "onednn_factory.h"
#include "switchyard/common/dtype.h"
#include "switchyard/sdk/backend.h"
#include "thread_pool.h"

namespace {

using sy::cpu_onednn::CpuPath;
using sy::plugin::PluginError;

// libgomp keeps its worker threads parked inside its own code after a parallel region and
// offers no way to join them; unmapping it under them (dlclose of this plugin dropping the last
// reference) would crash. Pinning it keeps those threads' code mapped for the process lifetime.
// (The pool runs oneDNN one thread per call, so no team should start; this stays as a guard.)
void pin_openmp_runtime() {
  static const bool pinned =
      dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  (void)pinned;
}

// The metadata note's description; the entry's adds the kernel path chosen at load.
#define SY_ONEDNN_DESCRIPTION "CPU backend: oneDNN GEMM, dispatched GEMV and attention kernels"

CpuPath g_path = CpuPath::scalar;
char g_description[192] = SY_ONEDNN_DESCRIPTION;

// Runs at every entry: picks the kernel path from cpuid or SWITCHYARD_CPU_KERNELS and names it
// in the description (`switchyard plugins --load` shows it); refuses the plugin when the variable
// asks for a path this CPU lacks, or the CPU lacks the AVX2 set the element-wise ops need.
const char* load_check() {
  static std::string error;
  const char* forced = std::getenv(sy::cpu_onednn::kCpuPathEnv);
  if (!sy::cpu_onednn::choose_path(forced, &g_path, &error)) return error.c_str();
  if (!sy::cpu_onednn::cpu_supports(CpuPath::avx2)) {
    error = "cpu_onednn needs AVX2, FMA and F16C for its element-wise ops; use cpu_ref";
    return error.c_str();
  }
  std::snprintf(g_description, sizeof g_description, SY_ONEDNN_DESCRIPTION "; %s kernels (%s%s)",
                sy::cpu_onednn::path_name(g_path), forced && *forced ? "forced by " : "from cpuid",
                forced && *forced ? sy::cpu_onednn::kCpuPathEnv : "");
  return nullptr;
}

std::unique_ptr<sy::plugin::Backend> make(const sy::plugin::Params& params) {
  sy::cpu_onednn::BackendOptions opt;
  opt.path = g_path;
  // Default: the physical cores among the CPUs this process may run on (taskset, a cgroup
  // cpuset): replicas pinned to disjoint cores must not each start a thread per machine core.
  opt.threads = sy::plugin::positive_int_param(params, "threads",
                                               sy::cpu_onednn::physical_core_count(), 1024);
  // The largest M the GEMV kernels take (0: every matmul on the GEMM; -1, the default: the
  // measured crossover of each weight), to measure the crossover.
  opt.gemv_max_m = sy::plugin::int_param(params, "gemv_max_m", -1, -1, 1 << 20);
  // The block types' GEMV activations: 8-bit blocks as llama.cpp's (the default), or the
  // near-exact int16 ones (kernels/kernels.h), kept to compare speed and accuracy.
  opt.act_bits = sy::plugin::int_param(params, "act_bits", 8, 8, 16);
  if (opt.act_bits != 8 && opt.act_bits != 16)
    throw sy::plugin::PluginError(SY_ERR_INVALID_ARG, "act_bits must be 8 or 16");
  // 0: weight_pack keeps every weight plain (to measure what the packed layouts bring).
  opt.repack = sy::plugin::int_param(params, "repack", 1, 0, 1) == 1;
  pin_openmp_runtime();
  return sy::cpu_onednn::make_backend(opt);
}

const char* const kKnownParams[] = {"threads", "gemv_max_m", "act_bits", "repack", nullptr};

SY_PLUGIN_NOTE(SY_PLUGIN_BACKEND, "cpu_onednn", "0.1.0", SY_CAP_ZERO_COPY_HOST,
               SY_ONEDNN_DESCRIPTION);

const sy::plugin::PluginDesc kDesc = {
    sy_plugin_note_.name,
    sy_plugin_note_.version,
    g_description,  // the note's, plus the kernel path load_check() picked
    sy_plugin_note_.capabilities_lo,
    sy::dtype::weight_mask(),
    kKnownParams,
    &make,
    /*hybrid_ops=*/true,
    /*device_memory=*/false,
    &load_check,
    /*kv_dtypes=*/(1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16),
    /*omit_ops=*/0,
    /*hybrid2_ops=*/true,
    /*dense2_ops=*/true,
};

}  // namespace

SY_DEFINE_BACKEND_PLUGIN(kDesc)
