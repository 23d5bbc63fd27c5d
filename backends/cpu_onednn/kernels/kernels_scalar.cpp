// The scalar kernel path (its instruction-set flags are in ../CMakeLists.txt).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "switchyard/abi/types.h"

namespace sy::cpu_onednn::kernels {
namespace scalar {
// The vector layer first, then the kernels written over it.
#include "simd_scalar.h"
// (kept in this order)
#include "kernels_impl.inc"
}  // namespace scalar

const KernelTable& table_scalar() {
  return scalar::table(CpuPath::scalar);
}

}  // namespace sy::cpu_onednn::kernels
