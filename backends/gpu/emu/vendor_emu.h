// Test-only vendor: runs the GPU kernel sources on the CPU so machines without a GPU can test them
// against cpu_ref. Each GPU thread is a fiber; a block's fibers run one at a time on the calling
// thread, switching only at barriers and warp shuffles, so __shared__ memory can be a static and
// every run is deterministic. The runtime API below completes every call before returning.
// Kernels must keep warp shuffles warp-uniform (as CUDA requires) and launch whole warps.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

#include "switchyard/common/half.h"

#define SY_GPU_RUNTIME "EMU"
#define SY_GPU_VENDOR "Switchyard CPU emulation"
#ifndef SY_WARP
#define SY_WARP 32
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct float4 {
  float x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};

namespace sy::emu {

struct ThreadCtx {
  uint3 thread, block;
  dim3 block_dim, grid_dim;
};
ThreadCtx& ctx();  // of the running fiber
void syncthreads();
uint64_t exchange(uint64_t bits, int lane_mask);  // one warp shuffle (xor pattern)
void launch(dim3 grid, dim3 block, const std::function<void()>& body);

template <class T>
T shfl_xor(T v, int lane_mask) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "shuffle of a value wider than 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  bits = exchange(bits, lane_mask);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace sy::emu

#define threadIdx (::sy::emu::ctx().thread)
#define blockIdx (::sy::emu::ctx().block)
#define blockDim (::sy::emu::ctx().block_dim)
#define gridDim (::sy::emu::ctx().grid_dim)
#define __syncthreads() ::sy::emu::syncthreads()
#define SY_SHFL_XOR(v, lane_mask) ::sy::emu::shfl_xor((v), (lane_mask))
#define SY_LAUNCH(kernel, grid, block, stream, ...) \
  ::sy::emu::launch((grid), (block), [&] { kernel(__VA_ARGS__); })

inline float __uint_as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
// A product that is never fused into an FMA (the host compiler builds without FMA contraction).
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float sy_half_to_float(uint16_t h) {
  return ::sy::dtype::f16_to_f32(h);
}
inline uint16_t sy_float_to_half(float f) {
  return ::sy::dtype::f32_to_f16(f);
}

// ---- runtime API: everything completes before the call returns ----
typedef int cudaError_t;
enum : int {
  cudaSuccess = 0,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100,
  cudaErrorNotReady = 600
};
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum : unsigned { cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2 };
typedef struct sy_emu_stream* cudaStream_t;
typedef struct sy_emu_event* cudaEvent_t;
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int warpSize, major, minor, multiProcessorCount;
};

cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaRuntimeGetVersion(int* version);
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaMalloc(void** p, size_t size);
cudaError_t cudaFree(void* p);
cudaError_t cudaMallocHost(void** p, size_t size);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                            cudaStream_t s);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t n, cudaStream_t s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
