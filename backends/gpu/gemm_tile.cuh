// The built-in tiled GEMM: y[r][j] = sum_c x[r][c] * w[j][c] with both operands c-contiguous.
// A source type says where rows come from, so the dense F32 matmul (when no vendor BLAS) and
// the grouped expert matmul (gathered token rows, dequantised expert rows) share one kernel.
// 64x64 output tiles, 16-deep slices in shared memory, 4x4 outputs per thread.
#pragma once

#include "device_common.cuh"

namespace sy::gpu {

constexpr int kTile = 64, kTileK = 16, kTilePer = 4;
constexpr int kTileThreads = (kTile / kTilePer) * (kTile / kTilePer);

// grid (ceil(n / kTile), ceil(max rows / kTile), groups); blockIdx.z picks the group.
template <class Src>
__global__ void gemm_tile_kernel(Src src) {
  __shared__ float xs[kTileK][kTile + 4];
  __shared__ float ws[kTileK][kTile + 4];
  const int m = src.rows(), n = src.n, k = src.k;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  if (m0 >= m) return;  // the whole block: its group has fewer rows
  const int tid = threadIdx.x;
  const int tr = tid / (kTile / kTilePer), tc = tid % (kTile / kTilePer);
  float acc[kTilePer][kTilePer];
#pragma unroll
  for (int i = 0; i < kTilePer; ++i)
#pragma unroll
    for (int j = 0; j < kTilePer; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTileK) {
    for (int i = tid; i < kTile * kTileK; i += kTileThreads) {
      const int r = i / kTileK, c = i % kTileK, gk = k0 + c;
      xs[c][r] = (m0 + r < m && gk < k) ? src.x(m0 + r, gk) : 0.0f;
      ws[c][r] = (n0 + r < n && gk < k) ? src.w(n0 + r, gk) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[kTilePer], b[kTilePer];
#pragma unroll
      for (int i = 0; i < kTilePer; ++i) a[i] = xs[kk][tr * kTilePer + i];
#pragma unroll
      for (int j = 0; j < kTilePer; ++j) b[j] = ws[kk][tc * kTilePer + j];
#pragma unroll
      for (int i = 0; i < kTilePer; ++i)
#pragma unroll
        for (int j = 0; j < kTilePer; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTilePer; ++i) {
    const int r = m0 + tr * kTilePer + i;
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < kTilePer; ++j) {
      const int c = n0 + tc * kTilePer + j;
      if (c < n) src.store(r, c, acc[i][j]);
    }
  }
}

// Plain F32 operands; y rows ldy apart.
struct DenseF32 {
  const float* xp;
  const float* wp;
  float* yp;
  int m, n, k, ldy;
  __device__ int rows() const { return m; }
  __device__ float x(int r, int c) const { return xp[(int64_t)r * k + c]; }
  __device__ float w(int j, int c) const { return wp[(int64_t)j * k + c]; }
  __device__ void store(int r, int j, float v) const { yp[(int64_t)r * ldy + j] = v; }
};

}  // namespace sy::gpu
