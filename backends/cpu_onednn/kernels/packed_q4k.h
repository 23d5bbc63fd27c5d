// Q4_K weights rearranged for the GEMV (sy_backend_iface::weight_pack): rows in groups of 16,
// each super-block column of a group one 2304-byte block (the 16 rows' 144-byte blocks, so a
// packed matrix has its plain size), laid out so that one 64-byte load holds four codes of every
// row of the group and the 16 rows' scales unpack with a few vector operations:
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 64)     dmin of rows 0..15 (F16)
//   [64, 192)    byte 64 + 16 s + r: the low 4 bits of scale s of row r, the min's above them
//   [192, 256)   byte 192 + 16 (s % 4) + r, nibble s / 4: the top 2 bits of that scale, the
//                min's above them
//   [256, 2304)  64 bytes per v = 0..31: byte 256 + 64 v + 4 r + i holds code 4 v + i of row r
//                (low nibble) and code 128 + 4 v + i (high nibble)
// Rows past the last whole group stay plain, after the groups.
#pragma once

#include <cstdint>

namespace sy::cpu_onednn::kernels {

constexpr int kPackRows = 16;
constexpr int kPackBlockBytes = 2304;  // 16 rows x 144
constexpr int kPackD = 0, kPackDmin = 32, kPackScaleLo = 64, kPackScaleHi = 192, kPackQs = 256;

// Rows of a packed matrix of n rows that lie in whole groups (the rest stay plain).
constexpr int64_t packed_rows(int64_t n) {
  return n / kPackRows * kPackRows;
}

// Rows [0, n) of a plain Q4_K matrix of k values a row (k % 256 == 0) into dst (the same size),
// packed as above.
void pack_q4k(const uint8_t* src, uint8_t* dst, int64_t k, int64_t n);

}  // namespace sy::cpu_onednn::kernels
