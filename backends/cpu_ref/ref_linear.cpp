// get_rows and matmul: dequantise a weight row to F32, then plain loops.
#include <vector>

#include "ref_backend.h"
#include "switchyard/common/dtype.h"

namespace sy::cpu_ref {

void RefBackend::get_rows(const Tensor& table, const int32_t* ids, const Tensor& dst) {
  const int64_t k = table.ne[0];
  const int64_t row_bytes = dtype::row_bytes(table.dtype, k);
  for (int64_t i = 0; i < dst.ne[1]; ++i)
    dtype::row_to_f32(table.dtype, table.bytes() + ids[i] * row_bytes, dst.f32() + i * k, k);
}

void RefBackend::matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = w.ne[0], n = w.ne[1], m = x.rows();
  const int64_t row_bytes = dtype::row_bytes(w.dtype, k);
  std::vector<float> wrow(k);
  for (int64_t j = 0; j < n; ++j) {
    dtype::row_to_f32(w.dtype, w.bytes() + j * row_bytes, wrow.data(), k);
    for (int64_t r = 0; r < m; ++r) {
      const float* xr = x.f32() + r * k;
      double acc = 0.0;
      for (int64_t i = 0; i < k; ++i) acc += (double)xr[i] * (double)wrow[i];
      y.f32()[r * n + j] = (float)acc;
    }
  }
}

}  // namespace sy::cpu_ref
