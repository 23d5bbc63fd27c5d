// The avx512_vnni kernel path (its instruction-set flags are in ../CMakeLists.txt).
#include <immintrin.h>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "switchyard/abi/types.h"

#define SY_SIMD_VNNI 1  // vpdpwssd

namespace sy::cpu_onednn::kernels {
namespace avx512_vnni {
// The vector layer first, then the kernels written over it.
#include "simd_avx512.h"
// (kept in this order)
#include "kernels_impl.inc"
}  // namespace avx512_vnni

const KernelTable& table_avx512_vnni() {
  return avx512_vnni::table(CpuPath::avx512_vnni);
}

}  // namespace sy::cpu_onednn::kernels
