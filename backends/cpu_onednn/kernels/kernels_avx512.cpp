// The avx512 kernel path (its instruction-set flags are in ../CMakeLists.txt).
#include <immintrin.h>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "switchyard/abi/types.h"

namespace sy::cpu_onednn::kernels {
namespace avx512 {
// The vector layer first, then the kernels written over it.
#include "simd_avx512.h"
// (kept in this order)
#include "kernels_impl.inc"
}  // namespace avx512

const KernelTable& table_avx512() {
  return avx512::table(CpuPath::avx512);
}

}  // namespace sy::cpu_onednn::kernels
