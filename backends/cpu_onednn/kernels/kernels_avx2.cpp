// The avx2 kernel path: AVX2, FMA and F16C.
#define SY_KERNEL_PATH avx2
#define SY_SIMD_HEADER "simd_avx2.h"
#include "kernel_path.inc"
