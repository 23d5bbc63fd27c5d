// The scalar kernel path (flags in CMakeLists.txt).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "switchyard/abi/types.h"

namespace sy::cpu_onednn::kernels {
namespace scalar {
#include "kernels_impl.inc"
#include "simd_scalar.h"
}  // namespace scalar

const KernelTable& table_scalar() {
  return scalar::table(CpuPath::scalar);
}

}  // namespace sy::cpu_onednn::kernels
