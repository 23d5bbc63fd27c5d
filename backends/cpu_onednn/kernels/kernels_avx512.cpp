// The avx512 kernel path (flags in CMakeLists.txt).
#include <cmath>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels.h"
#include "switchyard/abi/types.h"

namespace sy::cpu_onednn::kernels {
namespace avx512 {
#include "kernels_impl.inc"
#include "simd_avx512.h"
}  // namespace avx512

const KernelTable& table_avx512() {
  return avx512::table(CpuPath::avx512);
}

}  // namespace sy::cpu_onednn::kernels
