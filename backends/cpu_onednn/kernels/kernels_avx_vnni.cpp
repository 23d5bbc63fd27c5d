// The avx_vnni kernel path (flags in CMakeLists.txt).
#include <cmath>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "kernels.h"
#include "switchyard/abi/types.h"

#define SY_SIMD_VNNI 1

namespace sy::cpu_onednn::kernels {
namespace avx_vnni {
#include "kernels_impl.inc"
#include "simd_avx2.h"
}  // namespace avx_vnni

const KernelTable& table_avx_vnni() {
  return avx_vnni::table(CpuPath::avx_vnni);
}

}  // namespace sy::cpu_onednn::kernels
