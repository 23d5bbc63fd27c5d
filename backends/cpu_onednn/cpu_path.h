// Which kernel path (instruction set) the cpu_onednn kernels run: chosen once when the plugin is
// entered, from cpuid, or forced by SWITCHYARD_CPU_KERNELS. Built without AVX flags.
#pragma once

#include <string>

namespace sy::cpu_onednn {

// Ordered from the most portable to the most specific.
enum class CpuPath {
  scalar,       // plain C++: any x86-64 (the dispatched kernels only; see plugin.cpp)
  avx2,         // AVX2 + FMA + F16C
  avx512,       // AVX-512 F/BW/VL (+ the AVX2 set)
  avx512_vnni,  // avx512 + AVX-512 VNNI (vpdpwssd on 512-bit vectors)
  avx_vnni,     // avx2 + AVX-VNNI (VEX vpdpwssd on 256-bit vectors), for CPUs without AVX-512
};

constexpr const char* kCpuPathEnv = "SWITCHYARD_CPU_KERNELS";

const char* path_name(CpuPath p);

// True when this CPU (and its OS, for the AVX-512 register state) can run path p.
bool cpu_supports(CpuPath p);

// The fastest path this CPU supports: avx512_vnni, avx512, avx_vnni, avx2, scalar in that order.
CpuPath best_path();

// The path to run: `forced` (the environment variable's value, may be null or empty) or
// best_path(). Returns false with *error set for an unknown name or a path the CPU lacks.
bool choose_path(const char* forced, CpuPath* out, std::string* error);

}  // namespace sy::cpu_onednn
