// The avx2 kernel path (its instruction-set flags are in ../CMakeLists.txt).
#include <immintrin.h>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "switchyard/abi/types.h"

namespace sy::cpu_onednn::kernels {
namespace avx2 {
// The vector layer first, then the kernels written over it.
#include "simd_avx2.h"
// (kept in this order)
#include "kernels_impl.inc"
}  // namespace avx2

const KernelTable& table_avx2() {
  return avx2::table(CpuPath::avx2);
}

}  // namespace sy::cpu_onednn::kernels
