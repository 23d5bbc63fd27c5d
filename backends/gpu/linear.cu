// get_rows and matmul. Small batches (decode) run a GEMV that reads each weight row once in its
// stored dtype and accumulates in F32; larger batches go through a GEMM in F32, after
// dequantising F16/BF16/quantised weights panel by panel into scratch.
#include "blas.h"
#include "device_common.cuh"
#include "dispatch.h"
#include "gemm_tile.cuh"
#include "gpu_backend.h"

namespace sy::gpu {
namespace {

constexpr int kGemvWarps = 4;              // output rows per GEMV block
constexpr int kGemvMaxRows = 8;            // batch rows one GEMV pass handles
constexpr size_t kPanelBytes = 64u << 20;  // dequantised weight panel

// dst row i = src row (ids ? ids[i] : i), as F32. Also dequantises weight panels.
template <int DT>
__global__ void rows_to_f32_kernel(const uint8_t* src, int64_t row_bytes, int64_t k,
                                   const int32_t* ids, int64_t n_rows, float* dst) {
  const int64_t total = n_rows * k;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = i / k, c = i % k;
    const int64_t row = ids ? ids[r] : r;
    dst[i] = load_w<DT>(src + row * row_bytes, c);
  }
}

// One warp per output column j: y[r][j] = sum_k x[r][k] * w[j][k] for the m (<= 8) rows of x.
template <int DT>
__global__ void gemv_kernel(const float* x, const uint8_t* w, float* y, int64_t k, int64_t n, int m,
                            int64_t row_bytes, bool vec) {
  const int lane = threadIdx.x % SY_WARP;
  const int64_t j = (int64_t)blockIdx.x * kGemvWarps + threadIdx.x / SY_WARP;
  if (j >= n) return;  // the whole warp leaves together
  const uint8_t* row = w + j * row_bytes;
  float acc[kGemvMaxRows];
#pragma unroll
  for (int r = 0; r < kGemvMaxRows; ++r) acc[r] = 0.0f;
  if (vec) {  // 4 values per lane per step: 16-byte x loads, 8/16-byte weight loads
    for (int64_t c = 4 * lane; c < k; c += 4 * SY_WARP) {
      float wv[4];
      load_w4<DT>(row, c, wv);
#pragma unroll
      for (int r = 0; r < kGemvMaxRows; ++r) {
        if (r < m) {
          const float4 xv = *reinterpret_cast<const float4*>(x + r * k + c);
          acc[r] += wv[0] * xv.x + wv[1] * xv.y + wv[2] * xv.z + wv[3] * xv.w;
        }
      }
    }
  } else {
    for (int64_t c = lane; c < k; c += SY_WARP) {
      const float wv = load_w<DT>(row, c);
#pragma unroll
      for (int r = 0; r < kGemvMaxRows; ++r)
        if (r < m) acc[r] += wv * x[r * k + c];
    }
  }
#pragma unroll
  for (int r = 0; r < kGemvMaxRows; ++r) {
    if (r < m) {  // m is the same for every thread
      const float s = warp_sum(acc[r]);
      if (lane == 0) y[r * n + j] = s;
    }
  }
}

bool aligned(const void* p, uintptr_t a) {
  return (uintptr_t)p % a == 0;
}

}  // namespace

void GpuBackend::get_rows(const Tensor& table, const int32_t* ids, const Tensor& dst) {
  const int64_t n = dst.ne[1], k = table.ne[0];
  if (n == 0 || k == 0) return;
  begin_op({table.data, dst.data});
  meta_begin();
  const size_t ids_at = meta_add(ids, n * sizeof(int32_t));
  const int32_t* d_ids = reinterpret_cast<const int32_t*>(meta_upload() + ids_at);
  const int64_t row_bytes = dtype::row_bytes(table.dtype, k);
  SY_WEIGHT_DTYPE_SWITCH(table.dtype, "get_rows",
                         SY_LAUNCH(rows_to_f32_kernel<DT>, grid_for(n * k), kThreads, compute_,
                                   table.bytes(), row_bytes, k, d_ids, n, dst.f32()));
  launched("get_rows");
}

void GpuBackend::gemm_f32(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
                          int64_t ldy) {
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || ldy > INT32_MAX)
    throw plugin::Error(SY_ERR_UNSUPPORTED, "matmul: dimensions above 2^31 not supported");
  if (blas_) {
    blas_->gemm_nt(x, w, y, (int)m, (int)n, (int)k, (int)ldy);
    return;
  }
  const dim3 grid((unsigned)((n + kTile - 1) / kTile), (unsigned)((m + kTile - 1) / kTile));
  if (grid.y > 65535)
    throw plugin::Error(SY_ERR_UNSUPPORTED, "matmul: more than 4M rows not supported");
  const DenseF32 src{x, w, y, (int)m, (int)n, (int)k, (int)ldy};
  SY_LAUNCH(gemm_tile_kernel<DenseF32>, grid, kTileThreads, compute_, src);
  launched("matmul");
}

void GpuBackend::matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = w.ne[0], n = w.ne[1], m = x.rows();
  const int64_t row_bytes = dtype::row_bytes(w.dtype, k);
  begin_op({x.data, w.data, y.data});
  if (k == 0) {  // an empty sum
    check(cudaMemsetAsync(y.data, 0, (size_t)(m * n * sizeof(float)), compute_), "matmul: zero");
    return;
  }
  if (m <= kGemvMaxRows) {
    // Vector loads need 4 | k and aligned rows: 16 bytes for F32, 8 for F16/BF16; quantised
    // rows (2-byte aligned by construction) are read by element.
    const bool half_words = w.dtype == SY_DTYPE_F16 || w.dtype == SY_DTYPE_BF16;
    const uintptr_t w_align = w.dtype == SY_DTYPE_F32 ? 16 : half_words ? 8 : 2;
    const bool vec = k % 4 == 0 && aligned(x.data, 16) && aligned(w.data, w_align);
    const unsigned blocks = (unsigned)((n + kGemvWarps - 1) / kGemvWarps);
    SY_WEIGHT_DTYPE_SWITCH(w.dtype, "matmul",
                           SY_LAUNCH(gemv_kernel<DT>, blocks, kGemvWarps * SY_WARP, compute_,
                                     x.f32(), w.bytes(), y.f32(), k, n, (int)m, row_bytes, vec));
    launched("matmul");
    return;
  }
  if (w.dtype == SY_DTYPE_F32) {
    gemm_f32(x.f32(), w.f32(), y.f32(), m, n, k, n);
    return;
  }
  // Dequantise a panel of weight rows, multiply it, next panel: stream order makes reuse safe.
  const int64_t panel = std::clamp<int64_t>((int64_t)(kPanelBytes / (k * sizeof(float))), 1, n);
  float* scratch = reinterpret_cast<float*>(scratch_.get(panel * k * sizeof(float), compute_));
  for (int64_t j0 = 0; j0 < n; j0 += panel) {
    const int64_t rows = std::min(panel, n - j0);
    SY_WEIGHT_DTYPE_SWITCH(
        w.dtype, "matmul",
        SY_LAUNCH(rows_to_f32_kernel<DT>, grid_for(rows * k), kThreads, compute_,
                  w.bytes() + j0 * row_bytes, row_bytes, k, nullptr, rows, scratch));
    launched("matmul");
    gemm_f32(x.f32(), scratch, y.f32() + j0, m, rows, k, n);
  }
}

}  // namespace sy::gpu
