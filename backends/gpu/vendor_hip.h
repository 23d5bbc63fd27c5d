// ROCm HIP (hipcc): maps the CUDA runtime names the sources use to HIP's. Only the names this
// backend uses are listed.
#pragma once

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define SY_GPU_RUNTIME "HIP"  // in messages: "no HIP device"
#define SY_GPU_VENDOR "AMD"
// Wave size of the offload target (gfx90a, CDNA: 64). CMake sets it with the target; the device
// check refuses a GPU whose warpSize differs.
#ifndef SY_WARP
#define SY_WARP 64
#endif
#define SY_SHFL_XOR(v, lane_mask) __shfl_xor((v), (lane_mask), SY_WARP)

#define cudaDeviceProp hipDeviceProp_t
#define cudaError_t hipError_t
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorNotReady hipErrorNotReady
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDestroy hipEventDestroy
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventQuery hipEventQuery
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaFree hipFree
#define cudaFreeHost hipHostFree
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaMalloc hipMalloc
#define cudaMallocHost(ptr, size) hipHostMalloc((ptr), (size), hipHostMallocDefault)
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemsetAsync hipMemsetAsync
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaSetDevice hipSetDevice
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaStream_t hipStream_t
#define cudaSuccess hipSuccess

__device__ __forceinline__ float sy_half_to_float(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ uint16_t sy_float_to_half(float f) {  // round to nearest even
  return __half_as_ushort(__float2half_rn(f));
}
