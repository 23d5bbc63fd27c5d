#include "quant_weights.h"

#include <algorithm>

#include "switchyard/common/dtype.h"

namespace sy::cpu_onednn {
namespace {

// A dequantised panel of 128K floats (512 KiB) stays in L2 while the GEMM streams it.
constexpr int64_t kPanelValues = 128 * 1024;
constexpr int64_t kParallelMinValues = 1 << 15;

}  // namespace

bool dequantised_path(uint32_t dt) {
  return dt != SY_DTYPE_F32 && dt != SY_DTYPE_F16 && dt != SY_DTYPE_BF16 && dt != SY_DTYPE_Q8_0;
}

void dequantised_matmul(GemmCache& gemm, std::vector<float>& scratch, const plugin::Tensor& x,
                        const plugin::Tensor& w, const plugin::Tensor& y, int threads) {
  const int64_t k = w.ne[0], n = w.ne[1], m = x.rows();
  const int64_t row_bytes = dtype::row_bytes(w.dtype, k);
  const dtype::ToF32 to_f32 = dtype::traits(w.dtype)->to_f32;
  const int64_t panel = std::clamp<int64_t>(kPanelValues / k, 1, n);
  scratch.resize((size_t)(panel * k));
  for (int64_t n0 = 0; n0 < n; n0 += panel) {
    const int64_t np = std::min(panel, n - n0);
    const uint8_t* rows = w.bytes() + n0 * row_bytes;
    float* out = scratch.data();
#pragma omp parallel for schedule(static) num_threads(threads) if (np * k >= kParallelMinValues)
    for (int64_t j = 0; j < np; ++j) to_f32(rows + j * row_bytes, out + j * k, k);
    gemm.run(m, k, np, n, x.f32(), scratch.data(), y.f32() + n0, threads);
  }
}

void dequantised_get_rows(const plugin::Tensor& table, const int32_t* ids,
                          const plugin::Tensor& dst, int threads) {
  const int64_t k = table.ne[0], rows = dst.ne[1];
  const int64_t row_bytes = dtype::row_bytes(table.dtype, k);
  const dtype::ToF32 to_f32 = dtype::traits(table.dtype)->to_f32;
#pragma omp parallel for schedule(static) num_threads(threads) if (rows * k >= kParallelMinValues)
  for (int64_t i = 0; i < rows; ++i)
    to_f32(table.bytes() + ids[i] * row_bytes, dst.f32() + i * k, k);
}

}  // namespace sy::cpu_onednn
