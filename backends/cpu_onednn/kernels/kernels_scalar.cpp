// The scalar kernel path: portable C++, built without instruction-set flags.
#define SY_SIMD_SCALAR 1
#define SY_KERNEL_PATH scalar
#define SY_SIMD_HEADER "simd_scalar.h"
#include "kernel_path.inc"
