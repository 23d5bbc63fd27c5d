// Kernels for quantised and half-precision weights (F16, BF16, Q8_0).
#pragma once

#include <cstdint>

namespace sy::cpu_onednn {

// Largest M the fused kernel handles; larger batches dequantise panels and use the GEMM.
constexpr int64_t kFusedMaxM = 4;

// y[r * n + j] = dot(x row r, dequantised W row j) for r < m <= kFusedMaxM, j < n. Decode is
// memory bound, so each weight byte is read once per call and never written back as F32.
void fused_matmul(uint32_t dtype, const float* x, int64_t m, int64_t k, const uint8_t* w, int64_t n,
                  float* y, int threads);

// Rows [n0, n1) of W (rows of k values of `dtype`) as F32 into dst, row after row.
void dequant_rows(uint32_t dtype, const uint8_t* w, int64_t k, int64_t n0, int64_t n1, float* dst,
                  int threads);

// One row of k values of `dtype` at src as F32.
void dequant_row(uint32_t dtype, const uint8_t* src, float* dst, int64_t k);

}  // namespace sy::cpu_onednn
