// Path lookup, built without instruction-set flags (it runs before any path is known good).
#include "kernels.h"

namespace sy::cpu_onednn::kernels {

const GemvEntry* KernelTable::find_gemv(uint32_t dtype) const {
  for (int i = 0; i < n_gemv; ++i)
    if (gemv[i].dtype == dtype) return &gemv[i];
  return nullptr;
}

void KernelTable::dequant_row(uint32_t dtype, const uint8_t* row, float* dst, int64_t k) const {
  if (const GemvEntry* g = find_gemv(dtype)) g->dequant(row, dst, k);
}

const KernelTable& table_for(CpuPath p) {
  switch (p) {
    case CpuPath::avx2:
      return table_avx2();
    case CpuPath::avx512:
      return table_avx512();
    case CpuPath::avx512_vnni:
      return table_avx512_vnni();
    case CpuPath::avx_vnni:
      return table_avx_vnni();
    case CpuPath::scalar:
      break;
  }
  return table_scalar();
}

}  // namespace sy::cpu_onednn::kernels
