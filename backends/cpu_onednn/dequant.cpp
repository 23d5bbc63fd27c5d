#include "dequant.h"

#include <cstring>

#include "switchyard/common/dtype.h"
#include "vec_math.h"

namespace sy::cpu_onednn {

using dtype::BlockQ8_0;

void dequant_row(uint32_t dt, const uint8_t* src, float* dst, int64_t k) {
  int64_t i = 0;
  switch (dt) {
    case SY_DTYPE_F32:
      std::memcpy(dst, src, (size_t)k * sizeof(float));
      break;
    case SY_DTYPE_F16:
    case SY_DTYPE_BF16: {
      const uint16_t* s = (const uint16_t*)src;
      const bool bf16 = dt == SY_DTYPE_BF16;
      for (; i + 8 <= k; i += 8)
        _mm256_storeu_ps(dst + i, bf16 ? load_bf16x8(s + i) : load_f16x8(s + i));
      for (; i < k; ++i) dst[i] = bf16 ? bf16_scalar(s[i]) : f16_scalar(s[i]);
      break;
    }
    case SY_DTYPE_Q8_0: {
      const BlockQ8_0* b = (const BlockQ8_0*)src;
      for (int64_t j = 0; j < k / dtype::kQ8Block; ++j) {
        __m256 q[4];
        load_q8x32(b[j].qs, q);
        const __m256 d = _mm256_set1_ps(f16_scalar(b[j].d));
        for (int c = 0; c < 4; ++c)
          _mm256_storeu_ps(dst + j * dtype::kQ8Block + 8 * c, _mm256_mul_ps(d, q[c]));
      }
      break;
    }
    default:  // the other quantised types: the dtype table's codec
      dtype::row_to_f32(dt, src, dst, k);
      break;
  }
}

}  // namespace sy::cpu_onednn
