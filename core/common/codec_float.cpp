// F32, F16 and BF16 rows.
#include <cstring>

#include "switchyard/common/dtype.h"

namespace sy::dtype::codec {

void f32_to_f32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, (size_t)n * sizeof(float));
}
void f32_from_f32(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, (size_t)n * sizeof(float));
}

void f16_to_f32(const void* src, float* dst, int64_t n) {
  const uint16_t* s = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = dtype::f16_to_f32(s[i]);
}
void f16_from_f32(const float* src, void* dst, int64_t n) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = dtype::f32_to_f16(src[i]);
}

void bf16_to_f32(const void* src, float* dst, int64_t n) {
  const uint16_t* s = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = dtype::bf16_to_f32(s[i]);
}
void bf16_from_f32(const float* src, void* dst, int64_t n) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = dtype::f32_to_bf16(src[i]);
}

}  // namespace sy::dtype::codec
