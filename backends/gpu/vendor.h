// The one vendor switch of the GPU backend. Kernels and host code are written once against CUDA's
// runtime names; exactly one of these headers maps them to the toolchain in use, as ggml-cuda's
// vendors/ headers do. SY_GPU_HIP: hipcc (ROCm); SY_GPU_EMU: g++ with the CPU emulator used by
// the tests of machines without a GPU; neither: nvcc.
#pragma once

#include <cstdint>

#if defined(SY_GPU_HIP)
#include "vendor_hip.h"
#elif defined(SY_GPU_EMU)
#include "emu/vendor_emu.h"
#else
#include "vendor_cuda.h"
#endif

// Every launch goes through this macro: the emulator cannot parse <<< >>>.
#ifndef SY_LAUNCH
#define SY_LAUNCH(kernel, grid, block, stream, ...) \
  kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif

// BF16 is the top half of an F32; no vendor intrinsic is needed.
__device__ __forceinline__ float sy_bf16_to_float(uint16_t h) {
  return __uint_as_float((uint32_t)h << 16);
}
