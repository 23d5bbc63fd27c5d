// What plugin.cpp (built without AVX flags) needs from the AVX2-compiled backend.
#pragma once

#include <memory>

#include "cpu_path.h"
#include "switchyard/sdk/backend.h"

namespace sy::cpu_onednn {

struct BackendOptions {
  int threads = 1;               // the pool's size, the caller included
  CpuPath path = CpuPath::avx2;  // the dispatched kernels' instruction set
  int gemv_max_m = -1;           // largest M on the GEMV kernels; -1: the measured defaults
  int act_bits = 8;              // the block types' GEMV activations: 8 (q8_*) or 16 (q16)
  bool repack = true;            // weight_pack offers the packed layouts (kernels/packed_layouts.h)
};

// Call only after checking that the CPU has AVX2, FMA and F16C and can run opt.path.
std::unique_ptr<plugin::Backend> make_backend(const BackendOptions& opt);

}  // namespace sy::cpu_onednn
