// The avx512 kernel path: AVX-512 F/BW/VL.
// Weights may be packed (packed_layouts.h): this path has their kernels.
#define SY_SIMD_PACKED 512
#define SY_KERNEL_PATH avx512
#define SY_SIMD_HEADER "simd_avx512.h"
#include "kernel_path.inc"
