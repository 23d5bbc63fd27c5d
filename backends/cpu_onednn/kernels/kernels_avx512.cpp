// The avx512 kernel path: AVX-512 F/BW/VL.
#define SY_KERNEL_PATH avx512
#define SY_SIMD_HEADER "simd_avx512.h"
#include "kernel_path.inc"
