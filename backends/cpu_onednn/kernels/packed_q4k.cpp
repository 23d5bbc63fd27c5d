#include "packed_q4k.h"

#include <cstring>

#include "switchyard/common/block_formats.h"

namespace sy::cpu_onednn::kernels {
namespace {

using dtype::BlockQ4K;
using dtype::unpack_scale_min_k4;

constexpr int64_t kSuper = 256;

uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

// Where packed word v (codes 4v..4v+3 and 128+4v..128+4v+3) lives in a plain block's qs: the
// low codes are nibble `shift` (0 or 4) of the 4 bytes at qs + lo, the high codes of qs + lo + 64.
struct WordPlace {
  int lo, shift;
};
constexpr WordPlace place_of(int v) {
  return {32 * (v / 16) + 4 * (v % 8), 4 * ((v / 8) % 2)};
}
constexpr uint32_t kLow4 = 0x0F0F0F0Fu;

}  // namespace

void pack_q4k(const uint8_t* src, uint8_t* dst, int64_t k, int64_t n) {
  const int64_t nb = k / kSuper, row_bytes = nb * (int64_t)sizeof(BlockQ4K);
  const int64_t plain = packed_rows(n) * row_bytes;
  for (int64_t g = 0; g < n / kPackRows; ++g)
    for (int64_t ib = 0; ib < nb; ++ib) {
      uint8_t* out = dst + g * kPackRows * row_bytes + ib * kPackBlockBytes;
      std::memset(out, 0, kPackBlockBytes);
      for (int r = 0; r < kPackRows; ++r) {
        BlockQ4K b;
        std::memcpy(&b, src + (g * kPackRows + r) * row_bytes + ib * sizeof(BlockQ4K), sizeof b);
        std::memcpy(out + kPackD + 2 * r, &b.d, 2);
        std::memcpy(out + kPackDmin + 2 * r, &b.dmin, 2);
        for (int s = 0; s < 8; ++s) {
          int sc, mn;
          unpack_scale_min_k4(s, b.scales, sc, mn);
          out[kPackScaleLo + 16 * s + r] = (uint8_t)((sc & 15) | (mn & 15) << 4);
          out[kPackScaleHi + 16 * (s % 4) + r] |=
              (uint8_t)(((sc >> 4) | (mn >> 4) << 2) << 4 * (s / 4));
        }
        for (int v = 0; v < 32; ++v) {
          const WordPlace w = place_of(v);
          const uint32_t lo = u32_at(b.qs + w.lo) >> w.shift & kLow4;
          const uint32_t hi = u32_at(b.qs + w.lo + 64) >> w.shift & kLow4;
          put_u32(out + kPackQs + 64 * v + 4 * r, lo | hi << 4);
        }
      }
    }
  std::memcpy(dst + plain, src + plain, (size_t)(n * row_bytes - plain));
}

}  // namespace sy::cpu_onednn::kernels
