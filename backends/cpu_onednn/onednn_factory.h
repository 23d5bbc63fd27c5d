// The one symbol plugin.cpp (built without AVX flags) needs from the AVX2-compiled kernels.
#pragma once

#include <memory>

#include "switchyard/sdk/backend.h"

namespace sy::cpu_onednn {

// Call only after checking that the CPU has AVX2, FMA and F16C.
std::unique_ptr<plugin::Backend> make_backend(int threads);

}  // namespace sy::cpu_onednn
