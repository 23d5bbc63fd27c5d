// The avx512_vnni kernel path (flags in CMakeLists.txt).
#include <cmath>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels.h"
#include "switchyard/abi/types.h"

#define SY_SIMD_VNNI 1

namespace sy::cpu_onednn::kernels {
namespace avx512_vnni {
#include "kernels_impl.inc"
#include "simd_avx512.h"
}  // namespace avx512_vnni

const KernelTable& table_avx512_vnni() {
  return avx512_vnni::table(CpuPath::avx512_vnni);
}

}  // namespace sy::cpu_onednn::kernels
