// Factory, matmul dispatch and get_rows.
#include "onednn_backend.h"

#include <algorithm>
#include <cstring>

#include "fused_dot.h"
#include "onednn_factory.h"
#include "quant_weights.h"
#include "switchyard/common/dtype.h"

namespace sy::cpu_onednn {
namespace {

// Dequantised panel size for M > kFusedMaxM: 128K floats (512 KiB) stays in L2 while the GEMM
// streams it, and each panel GEMM is large enough that oneDNN's call overhead is noise.
constexpr int64_t kPanelValues = 128 * 1024;

}  // namespace

std::unique_ptr<plugin::Backend> make_backend(int threads) {
  return std::make_unique<OnednnBackend>(threads);
}

// F32: one cached oneDNN GEMM. F16/BF16/Q8_0: the fused dequantise-and-dot kernel while M is
// small (decode, memory bound), else dequantise panels of weight rows and GEMM each panel.
void OnednnBackend::matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = w.ne[0], n = w.ne[1], m = x.rows();
  if (k == 0) {  // an empty sum; oneDNN rejects zero-sized reductions
    std::memset(y.data, 0, (size_t)(m * n) * sizeof(float));
    return;
  }
  if (w.dtype == SY_DTYPE_F32) {
    gemm_.run(m, k, n, n, x.f32(), w.f32(), y.f32(), threads_);
    return;
  }
  if (dequantised_path(w.dtype)) return dequantised_matmul(gemm_, scratch_, x, w, y, threads_);
  if (m <= kFusedMaxM) {
    fused_matmul(w.dtype, x.f32(), m, k, w.bytes(), n, y.f32(), threads_);
    return;
  }
  const int64_t panel = std::min(n, std::max<int64_t>(8, kPanelValues / k / 8 * 8));
  scratch_.resize((size_t)(panel * k));
  for (int64_t n0 = 0; n0 < n; n0 += panel) {
    const int64_t np = std::min(panel, n - n0);
    dequant_rows(w.dtype, w.bytes(), k, n0, n0 + np, scratch_.data(), threads_);
    gemm_.run(m, k, np, n, x.f32(), scratch_.data(), y.f32() + n0, threads_);
  }
}

void OnednnBackend::get_rows(const Tensor& table, const int32_t* ids, const Tensor& dst) {
  if (dequantised_path(table.dtype)) return dequantised_get_rows(table, ids, dst, threads_);
  const int64_t k = table.ne[0], rows = dst.ne[1];
  const int64_t row_bytes = dtype::row_bytes(table.dtype, k);
#pragma omp parallel for schedule(static) num_threads(threads_) if (rows * k >= (1 << 16))
  for (int64_t i = 0; i < rows; ++i)
    dequant_row(table.dtype, table.bytes() + ids[i] * row_bytes, dst.f32() + i * k, k);
}

}  // namespace sy::cpu_onednn
