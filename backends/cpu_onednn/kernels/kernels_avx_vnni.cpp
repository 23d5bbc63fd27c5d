// The avx_vnni kernel path: AVX2 with AVX-VNNI's vpdpwssd, for CPUs without AVX-512.
#define SY_SIMD_VNNI 1
// Q4_0 weights may be packed (packed_layouts.h): this path has their kernel, a group in two
// halves.
#define SY_SIMD_PACKED 256
#define SY_KERNEL_PATH avx_vnni
#define SY_SIMD_HEADER "simd_avx2.h"
#include "kernel_path.inc"
