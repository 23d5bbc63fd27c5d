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
// Q6_K, 3360 bytes per 256-value super-block column (16 x 210), codes c = value / (d * scale)
// + 32 in 0..63:
//   [0, 32)      d of rows 0..15 (F16)
//   [32, 288)    byte 32 + 16 s + r: scale s (int8, values 16 s .. 16 s + 15) of row r
//   [288, 2336)  64 bytes per v = 0..31: byte 288 + 64 v + 4 r + i holds the low 4 bits of code
//                4 v + i of row r (low nibble) and of code 128 + 4 v + i (high nibble)
//   [2336, 3360) 64 bytes per u = 0..15: byte 2336 + 64 u + 4 r + i holds the top 2 bits of
//                those codes of word u (bits 0-1, 2-3) and of word u + 16 (bits 4-5, 6-7)
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
constexpr int kPackQ6BlockBytes = 3360;  // Q6_K: 16 rows x 210
constexpr int kPackQ6D = 0, kPackQ6Scales = 32, kPackQ6Low = 288, kPackQ6High = 2336;
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

// Row r's plain Q6_K block (210 bytes, dtype::BlockQ6K) from a packed block column: what the
// GEMM's panels dequantise, bit for bit the plain row's values.
void unpack_q6k_block(const uint8_t* column, int r, uint8_t* block);

}  // namespace sy::cpu_onednn::kernels
