#include "fused_dot.h"

#include <cstring>

#include "switchyard/common/dtype.h"
#include "vec_math.h"

namespace sy::cpu_onednn {
namespace {

using dtype::BlockQ8_0;

// Below this many weight values a parallel region costs more than it saves.
constexpr int64_t kParallelMinValues = 1 << 15;

// Dot products of M rows of x (stride k) with one F16 or BF16 weight row; two accumulators per
// row of x hide the FMA latency.
template <int M, bool kBf16>
void dot_row_16bit(const float* x, int64_t k, const uint16_t* w, float* out, int64_t ldo) {
  __m256 acc[M][2];
  for (int r = 0; r < M; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  auto load = [](const uint16_t* p) { return kBf16 ? load_bf16x8(p) : load_f16x8(p); };
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m256 w0 = load(w + i), w1 = load(w + i + 8);
    for (int r = 0; r < M; ++r) {
      acc[r][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + r * k + i), acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + r * k + i + 8), acc[r][1]);
    }
  }
  for (; i + 8 <= k; i += 8) {
    const __m256 w0 = load(w + i);
    for (int r = 0; r < M; ++r)
      acc[r][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + r * k + i), acc[r][0]);
  }
  for (int r = 0; r < M; ++r) {
    float s = hsum(_mm256_add_ps(acc[r][0], acc[r][1]));
    for (int64_t j = i; j < k; ++j)
      s += x[r * k + j] * (kBf16 ? bf16_scalar(w[j]) : f16_scalar(w[j]));
    out[r * ldo] = s;
  }
}

// Same for a Q8_0 row: per block, sum(q * x) in F32 then one FMA with the block's scale.
template <int M>
void dot_row_q8(const float* x, int64_t k, const BlockQ8_0* w, float* out, int64_t ldo) {
  __m256 acc[M][2];
  for (int r = 0; r < M; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  auto block = [&](int64_t b, int slot) {
    __m256 q[4];
    load_q8x32(w[b].qs, q);
    const __m256 d = _mm256_set1_ps(f16_scalar(w[b].d));
    for (int r = 0; r < M; ++r) {
      const float* xr = x + r * k + b * dtype::kQ8Block;
      __m256 s0 = _mm256_mul_ps(q[0], _mm256_loadu_ps(xr));
      __m256 s1 = _mm256_mul_ps(q[2], _mm256_loadu_ps(xr + 16));
      s0 = _mm256_fmadd_ps(q[1], _mm256_loadu_ps(xr + 8), s0);
      s1 = _mm256_fmadd_ps(q[3], _mm256_loadu_ps(xr + 24), s1);
      acc[r][slot] = _mm256_fmadd_ps(d, _mm256_add_ps(s0, s1), acc[r][slot]);
    }
  };
  const int64_t nb = k / dtype::kQ8Block;
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    block(b, 0);
    block(b + 1, 1);
  }
  if (b < nb) block(b, 0);
  for (int r = 0; r < M; ++r) out[r * ldo] = hsum(_mm256_add_ps(acc[r][0], acc[r][1]));
}

template <int M>
void fused_m(uint32_t dt, const float* x, int64_t k, const uint8_t* w, int64_t n, float* y,
             int threads) {
  const int64_t row_bytes = dtype::row_bytes(dt, k);
#pragma omp parallel for schedule(static) num_threads(threads) if (n * k >= kParallelMinValues)
  for (int64_t j = 0; j < n; ++j) {
    const uint8_t* row = w + j * row_bytes;
    switch (dt) {
      case SY_DTYPE_F16:
        dot_row_16bit<M, false>(x, k, (const uint16_t*)row, y + j, n);
        break;
      case SY_DTYPE_BF16:
        dot_row_16bit<M, true>(x, k, (const uint16_t*)row, y + j, n);
        break;
      case SY_DTYPE_Q8_0:
        dot_row_q8<M>(x, k, (const BlockQ8_0*)row, y + j, n);
        break;
      default:
        break;  // F32 never comes here
    }
  }
}

}  // namespace

void fused_matmul(uint32_t dt, const float* x, int64_t m, int64_t k, const uint8_t* w, int64_t n,
                  float* y, int threads) {
  switch (m) {
    case 1:
      fused_m<1>(dt, x, k, w, n, y, threads);
      break;
    case 2:
      fused_m<2>(dt, x, k, w, n, y, threads);
      break;
    case 3:
      fused_m<3>(dt, x, k, w, n, y, threads);
      break;
    case 4:
      fused_m<4>(dt, x, k, w, n, y, threads);
      break;
    default:
      break;
  }
}

void dequant_row(uint32_t dt, const uint8_t* src, float* dst, int64_t k) {
  int64_t i = 0;
  switch (dt) {
    case SY_DTYPE_F32:
      std::memcpy(dst, src, (size_t)k * sizeof(float));
      break;
    case SY_DTYPE_F16:
    case SY_DTYPE_BF16: {
      const uint16_t* s = (const uint16_t*)src;
      const bool bf16 = dt == SY_DTYPE_BF16;
      for (; i + 8 <= k; i += 8)
        _mm256_storeu_ps(dst + i, bf16 ? load_bf16x8(s + i) : load_f16x8(s + i));
      for (; i < k; ++i) dst[i] = bf16 ? bf16_scalar(s[i]) : f16_scalar(s[i]);
      break;
    }
    case SY_DTYPE_Q8_0: {
      const BlockQ8_0* b = (const BlockQ8_0*)src;
      for (int64_t j = 0; j < k / dtype::kQ8Block; ++j) {
        __m256 q[4];
        load_q8x32(b[j].qs, q);
        const __m256 d = _mm256_set1_ps(f16_scalar(b[j].d));
        for (int c = 0; c < 4; ++c)
          _mm256_storeu_ps(dst + j * dtype::kQ8Block + 8 * c, _mm256_mul_ps(d, q[c]));
      }
      break;
    }
    default:
      break;
  }
}

void dequant_rows(uint32_t dt, const uint8_t* w, int64_t k, int64_t n0, int64_t n1, float* dst,
                  int threads) {
  const int64_t row_bytes = dtype::row_bytes(dt, k);
#pragma omp parallel for schedule(static) \
    num_threads(threads) if ((n1 - n0) * k >= kParallelMinValues)
  for (int64_t j = n0; j < n1; ++j) dequant_row(dt, w + j * row_bytes, dst + (j - n0) * k, k);
}

}  // namespace sy::cpu_onednn
