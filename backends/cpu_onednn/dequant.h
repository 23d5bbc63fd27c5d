// Weight rows of any dtype as F32 (F16, BF16 and Q8_0 vectorised, the others through the dtype
// table's codecs): for get_rows and the GEMM's dequantised panels.
#pragma once

#include <cstdint>

namespace sy::cpu_onednn {

// One row of k values of `dtype` at src as F32.
void dequant_row(uint32_t dtype, const uint8_t* src, float* dst, int64_t k);

}  // namespace sy::cpu_onednn
