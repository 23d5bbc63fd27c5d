// The avx2 kernel path (flags in CMakeLists.txt).
#include <cmath>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels.h"
#include "switchyard/abi/types.h"

namespace sy::cpu_onednn::kernels {
namespace avx2 {
#include "kernels_impl.inc"
#include "simd_avx2.h"
}  // namespace avx2

const KernelTable& table_avx2() {
  return avx2::table(CpuPath::avx2);
}

}  // namespace sy::cpu_onednn::kernels
