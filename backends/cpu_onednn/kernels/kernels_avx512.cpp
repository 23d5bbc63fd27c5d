// The avx512 kernel path: AVX-512 F/BW/VL.
// Q4_K weights may be packed (packed_q4k.h): this path has their kernel.
#define SY_SIMD_PACKED_Q4K 1
#define SY_KERNEL_PATH avx512
#define SY_SIMD_HEADER "simd_avx512.h"
#include "kernel_path.inc"
