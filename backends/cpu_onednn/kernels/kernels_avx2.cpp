// The avx2 kernel path: AVX2, FMA and F16C.
// Q4_0 weights may be packed (packed_layouts.h): this path has their kernel, a group in two
// halves.
#define SY_SIMD_PACKED 256
#define SY_KERNEL_PATH avx2
#define SY_SIMD_HEADER "simd_avx2.h"
#include "kernel_path.inc"
