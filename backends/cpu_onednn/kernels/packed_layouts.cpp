#include "packed_layouts.h"

#include <cstring>

#include "switchyard/abi/types.h"
#include "switchyard/common/block_formats.h"

namespace sy::cpu_onednn::kernels {
namespace {

using dtype::BlockIq4Nl;
using dtype::BlockMxfp4;
using dtype::BlockQ4_0;
using dtype::BlockQ4K;
using dtype::BlockQ6K;
using dtype::BlockQ8_0;
using dtype::q6k_code;
using dtype::unpack_scale_min_k4;

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

void pack_q4k_block(const BlockQ4K& b, int r, uint8_t* out) {
  std::memcpy(out + kPackD + 2 * r, &b.d, 2);
  std::memcpy(out + kPackDmin + 2 * r, &b.dmin, 2);
  for (int s = 0; s < 8; ++s) {
    int sc, mn;
    unpack_scale_min_k4(s, b.scales, sc, mn);
    out[kPackScaleLo + 16 * s + r] = (uint8_t)((sc & 15) | (mn & 15) << 4);
    out[kPackScaleHi + 16 * (s % 4) + r] |= (uint8_t)(((sc >> 4) | (mn >> 4) << 2) << 4 * (s / 4));
  }
  for (int v = 0; v < 32; ++v) {
    const WordPlace w = place_of(v);
    const uint32_t lo = u32_at(b.qs + w.lo) >> w.shift & kLow4;
    const uint32_t hi = u32_at(b.qs + w.lo + 64) >> w.shift & kLow4;
    put_u32(out + kPackQs + 64 * v + 4 * r, lo | hi << 4);
  }
}

// Sets code `idx` of a zeroed plain Q6_K block (the inverse of dtype::q6k_code).
void set_q6k_code(BlockQ6K& b, int idx, int code) {
  const int h = idx / 128, p = idx % 128 / 32, l = idx % 32;
  b.ql[64 * h + l + 32 * (p & 1)] |= (uint8_t)((code & 15) << (4 * (p / 2)));
  b.qh[32 * h + l] |= (uint8_t)((code >> 4) << (2 * p));
}

void pack_q6k_block(const BlockQ6K& b, int r, uint8_t* out) {
  std::memcpy(out + kPackQ6D + 2 * r, &b.d, 2);
  for (int s = 0; s < 16; ++s) out[kPackQ6Scales + 16 * s + r] = (uint8_t)b.scales[s];
  for (int v = 0; v < 32; ++v)
    for (int i = 0; i < 4; ++i) {
      const int lo = q6k_code(b, 4 * v + i), hi = q6k_code(b, 128 + 4 * v + i);
      out[kPackQ6Low + 64 * v + 4 * r + i] = (uint8_t)((lo & 15) | (hi & 15) << 4);
      out[kPackQ6High + 64 * (v % 16) + 4 * r + i] |=
          (uint8_t)(((lo >> 4) | (hi >> 4) << 2) << (4 * (v / 16)));
    }
}

// A 32-value block: d, then its qs in 4-byte words, each XORed with `flip` (Q8_0: the +128).
template <class Block>
void pack_block32(const Block& b, int r, uint8_t* out, uint32_t flip) {
  std::memcpy(out + 2 * r, &b.d, 2);
  for (int v = 0; v < (int)sizeof b.qs / 4; ++v)
    put_u32(out + kPack32Qs + 64 * v + 4 * r, u32_at((const uint8_t*)b.qs + 4 * v) ^ flip);
}

// MXFP4: the exponent, then the qs words as Q4_0's.
void pack_mxfp4_block(const BlockMxfp4& b, int r, uint8_t* out) {
  out[r] = b.e;
  for (int v = 0; v < 4; ++v) put_u32(out + kPack32QsMxfp4 + 64 * v + 4 * r, u32_at(b.qs + 4 * v));
}

// Every whole group of rows, block column by block column: pack(block, r, out).
template <class Block, class Pack>
void pack_groups(const uint8_t* src, uint8_t* dst, int64_t nb, int64_t n, Pack&& pack) {
  const int64_t row_bytes = nb * (int64_t)sizeof(Block), out_bytes = kPackRows * sizeof(Block);
  for (int64_t g = 0; g < n / kPackRows; ++g)
    for (int64_t ib = 0; ib < nb; ++ib) {
      uint8_t* out = dst + g * kPackRows * row_bytes + ib * out_bytes;
      std::memset(out, 0, (size_t)out_bytes);
      for (int r = 0; r < kPackRows; ++r) {
        Block b;
        std::memcpy(&b, src + (g * kPackRows + r) * row_bytes + ib * sizeof(Block), sizeof b);
        pack(b, r, out);
      }
    }
  const int64_t plain = packed_rows(n) * row_bytes;
  std::memcpy(dst + plain, src + plain, (size_t)(n * row_bytes - plain));
}

static_assert(sizeof(BlockQ8_0) * kPackRows == kPack32BlockBytesQ8_0 &&
              sizeof(BlockQ4_0) * kPackRows == kPack32BlockBytesQ4_0 &&
              sizeof(BlockIq4Nl) * kPackRows == kPack32BlockBytesIq4Nl &&
              sizeof(BlockMxfp4) * kPackRows == kPack32BlockBytesMxfp4 &&
              sizeof(BlockQ4K) * kPackRows == kPackBlockBytes &&
              sizeof(BlockQ6K) * kPackRows == kPackQ6BlockBytes);

}  // namespace

void unpack_q6k_block(const uint8_t* column, int r, uint8_t* block) {
  BlockQ6K b{};
  std::memcpy(&b.d, column + kPackQ6D + 2 * r, 2);
  for (int s = 0; s < 16; ++s) b.scales[s] = (int8_t)column[kPackQ6Scales + 16 * s + r];
  for (int v = 0; v < 32; ++v)
    for (int i = 0; i < 4; ++i) {
      const int low = column[kPackQ6Low + 64 * v + 4 * r + i];
      const int high = column[kPackQ6High + 64 * (v % 16) + 4 * r + i] >> (4 * (v / 16));
      set_q6k_code(b, 4 * v + i, (low & 15) | (high & 3) << 4);
      set_q6k_code(b, 128 + 4 * v + i, (low >> 4) | (high >> 2 & 3) << 4);
    }
  std::memcpy(block, &b, sizeof b);
}

bool has_packed_layout(uint32_t dtype) {
  return dtype == SY_DTYPE_Q4_K || dtype == SY_DTYPE_Q6_K || dtype == SY_DTYPE_Q8_0 ||
         dtype == SY_DTYPE_Q4_0 || dtype == SY_DTYPE_IQ4_NL || dtype == SY_DTYPE_MXFP4;
}

void pack_rows(uint32_t dtype, const uint8_t* src, uint8_t* dst, int64_t k, int64_t n) {
  switch (dtype) {
    case SY_DTYPE_Q4_K:
      return pack_groups<BlockQ4K>(src, dst, k / 256, n, pack_q4k_block);
    case SY_DTYPE_Q6_K:
      return pack_groups<BlockQ6K>(src, dst, k / 256, n, pack_q6k_block);
    case SY_DTYPE_Q8_0:
      return pack_groups<BlockQ8_0>(src, dst, k / 32, n, [](const BlockQ8_0& b, int r, uint8_t* o) {
        pack_block32(b, r, o, 0x80808080u);
      });
    case SY_DTYPE_Q4_0:
      return pack_groups<BlockQ4_0>(src, dst, k / 32, n, [](const BlockQ4_0& b, int r, uint8_t* o) {
        pack_block32(b, r, o, 0u);
      });
    case SY_DTYPE_IQ4_NL:
      return pack_groups<BlockIq4Nl>(
          src, dst, k / 32, n,
          [](const BlockIq4Nl& b, int r, uint8_t* o) { pack_block32(b, r, o, 0u); });
    case SY_DTYPE_MXFP4:
      return pack_groups<BlockMxfp4>(src, dst, k / 32, n, pack_mxfp4_block);
    default:
      return;
  }
}

}  // namespace sy::cpu_onednn::kernels
