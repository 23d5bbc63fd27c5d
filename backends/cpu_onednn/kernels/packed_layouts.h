// Weights rearranged for the GEMV (sy_backend_iface::weight_pack): rows in groups of 16, each
// block column of a group one block of the 16 rows' bytes (so a packed matrix has its plain
// size), laid out so that one 64-byte load holds four codes of every row of the group: the four
// activation quants those codes meet are one broadcast 32-bit value, one vpdpbusd per 64 codes
// and no per-row decoding. Rows past the last whole group stay plain, after the groups.
//
// Q4_K, 2304 bytes per 256-value super-block column (16 x 144):
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 64)     dmin of rows 0..15 (F16)
//   [64, 192)    byte 64 + 16 s + r: the low 4 bits of scale s of row r, the min's above them
//   [192, 256)   byte 192 + 16 (s % 4) + r, nibble s / 4: the top 2 bits of that scale, the
//                min's above them
//   [256, 2304)  64 bytes per v = 0..31: byte 256 + 64 v + 4 r + i holds code 4 v + i of row r
//                (low nibble) and code 128 + 4 v + i (high nibble)
// Q8_0, 544 bytes per 32-value block column (16 x 34):
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 544)    byte 32 + 64 v + 4 r + i (v = 0..7): code 4 v + i of row r plus 128 (as
//                unsigned, so that vpdpbusd takes it; the lanes start at -128 times the
//                activations' sum)
// Q4_0, 288 bytes per 32-value block column (16 x 18):
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 288)    byte 32 + 64 v + 4 r + i (v = 0..3): byte 4 v + i of row r's qs, that is code
//                4 v + i (low nibble) and 16 + 4 v + i (high), unsigned (the value is code - 8)
// IQ4_NL, 288 bytes per block column: as Q4_0 (the kernels look each nibble up in the levels)
// MXFP4, 272 bytes per 32-value block column (16 x 17):
//   [0, 16)      e of rows 0..15 (E8M0)
//   [16, 272)    byte 16 + 64 v + 4 r + i: as Q4_0's qs
#pragma once

#include <cstdint>

namespace sy::cpu_onednn::kernels {

constexpr int kPackRows = 16;
constexpr int kPackBlockBytes = 2304;  // Q4_K: 16 rows x 144
constexpr int kPackD = 0, kPackDmin = 32, kPackScaleLo = 64, kPackScaleHi = 192, kPackQs = 256;
// The 32-value block types: the 16 rows' d, then their code words.
constexpr int kPack32Qs = 32, kPack32QsMxfp4 = 16;
constexpr int kPack32BlockBytesQ8_0 = 544, kPack32BlockBytesQ4_0 = 288,
              kPack32BlockBytesIq4Nl = 288, kPack32BlockBytesMxfp4 = 272;

// Rows of a packed matrix of n rows that lie in whole groups (the rest stay plain).
constexpr int64_t packed_rows(int64_t n) {
  return n / kPackRows * kPackRows;
}

// Whether `dtype` (sy_dtype) has a packed layout above.
bool has_packed_layout(uint32_t dtype);

// Rows [0, n) of a plain matrix of `dtype` (has_packed_layout) of k values a row into dst (the
// same size), packed as above.
void pack_rows(uint32_t dtype, const uint8_t* src, uint8_t* dst, int64_t k, int64_t n);

}  // namespace sy::cpu_onednn::kernels
