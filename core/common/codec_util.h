// Helpers shared by the codecs (internal to switchyard_common).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "switchyard/common/half.h"

namespace sy::dtype::codec {

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves the rounded integer
// in the low mantissa bits. ggml's quantizers round this way, so ours must too to write the
// same bytes.
inline int nearest_int(float v) {
  float shifted = v + 12582912.0f;
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);
  return (bits & 0x007fffff) - 0x00400000;
}

inline float half(uint16_t h) {
  return f16_to_f32(h);
}
inline uint16_t to_half(float f) {
  return f32_to_f16(f);
}

// Value and sign of the element of largest magnitude (the first one on ties), as ggml picks it.
struct AbsMax {
  float abs = 0.0f, value = 0.0f;
};
inline AbsMax abs_max(const float* x, int n) {
  AbsMax r;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > r.abs) r = {std::fabs(x[i]), x[i]};
  return r;
}

}  // namespace sy::dtype::codec
