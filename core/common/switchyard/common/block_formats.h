// ggml's quantised block layouts, byte for byte (ggml-common.h), so GGUF tensor data is used as
// stored. Plain structs of bytes and 16-bit halves with no padding: host code, the CPU backends
// and the GPU kernels (nvcc, hipcc, the emulator) all include this. "half" fields are IEEE
// binary16 bit patterns; every multi-byte field is little-endian.
//
// Within a block, value i is decoded from the fields as each struct's comment says; the codecs
// (core/common/codec_*.cpp) and the GPU loaders (backends/gpu/quant_load.cuh) implement that.
#pragma once

#include <cstdint>

namespace sy::dtype {

constexpr int kQ8Block = 32;      // values per Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/IQ4_NL block
constexpr int kSuperBlock = 256;  // values per K-quant / IQ4_XS super-block (ggml's QK_K)

// The 16 levels of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl), ascending.
constexpr int8_t kIq4nlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

// ---- 32-value blocks --------------------------------------------------------------------------

// v[j] = d * (q - 8); q = low nibble of qs[j] for j < 16, high nibble of qs[j - 16] above.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
// v[j] = d * q + m; nibbles as Q4_0.
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
// v[j] = d * (q - 16); q = nibble as Q4_0 plus bit j of qh (a little-endian u32) as bit 4.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
// v[j] = d * q + m; q as Q5_0.
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
// v[j] = d * qs[j].
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQ8Block];
};
// v[j] = d * kIq4nlLevels[q]; nibbles as Q4_0.
struct BlockIq4Nl {
  uint16_t d;
  uint8_t qs[16];
};

// The 16 E2M1 values of MXFP4, doubled (ggml's kvalues_mxfp4): the scale is halved to match.
constexpr int8_t kMxfp4Levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// v[j] = 2^(e - 128) * kMxfp4Levels[q]; nibbles as Q4_0. e is an E8M0 exponent (bias 127),
// halved (ggml_e8m0_to_fp32_half) to match the doubled levels.
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[16];
};

// 2^(e - 128) as F32 bits: subnormal for e < 2 (ggml_e8m0_to_fp32_half).
constexpr uint32_t e8m0_half_bits(uint8_t e) {
  return e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
}

// ---- 256-value super-blocks -------------------------------------------------------------------
// Values are numbered i = 128 * h + 32 * p + l (h: half, p: 2-bit plane, l < 32) where a format
// packs 2-bit planes, and sub-blocks of 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K, IQ4_XS) values
// carry their own scale.

// 16 sub-blocks of 16: v = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4), s = i / 16;
// q = (qs[32 * h + l] >> 2p) & 3.
struct BlockQ2K {
  uint8_t scales[16];
  uint8_t qs[64];
  uint16_t d, dmin;
};
// 16 sub-blocks of 16: v = d * (sc[s] - 32) * (q - (hmask bit set ? 0 : 4)), s = i / 16;
// q = (qs[32 * h + l] >> 2p) & 3; the high bit is bit (4h + p) of hmask[l]; sc[s] is 6 bits:
// low 4 from scales[s % 8] (low nibble for s < 8, high nibble above), high 2 from
// scales[8 + s % 4] bits 2 * (s / 4).
struct BlockQ3K {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;
};
// 8 sub-blocks of 32: v = d * sc[s] * q - dmin * mn[s], s = i / 32; q = nibble (low for even s,
// high for odd s) of qs[32 * (s / 2) + l]. sc, mn are 6 bits (see unpack_scale_min_k4).
struct BlockQ4K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
// As Q4_K with a fifth bit: bit s of qh[l] (l = i % 32).
struct BlockQ5K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
// 16 sub-blocks of 16: v = d * scales[s] * (q - 32), s = i / 16; q is 6 bits: the low nibble of
// ql[64 * h + l + 32 * (p & 1)] (high nibble when p >= 2) and bits 2p..2p+1 of qh[32 * h + l].
struct BlockQ6K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
// 8 sub-blocks of 32: v = d * (ls[s] - 32) * kIq4nlLevels[q]; ls[s] is 6 bits: the nibble s % 2
// of scales_l[s / 2] and bits 2s..2s+1 of scales_h; q = nibble (low for l < 16) of
// qs[16 * s + l % 16].
struct BlockIq4Xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[4];
  uint8_t qs[128];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
                  sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockIq4Nl) == 18,
              "32-value blocks must have ggml's sizes");
static_assert(sizeof(BlockQ2K) == 84 && sizeof(BlockQ3K) == 110 && sizeof(BlockQ4K) == 144 &&
                  sizeof(BlockQ5K) == 176 && sizeof(BlockQ6K) == 210 && sizeof(BlockIq4Xs) == 136,
              "super-blocks must have ggml's sizes");

// The 6-bit scale and min of sub-block s (0..7) of Q4_K / Q5_K: for s < 4 the low 6 bits of
// scales[s] and scales[s + 4]; above, the nibbles of scales[s + 4] plus the top two bits of
// scales[s - 4] and scales[s] as bits 4..5.
#if defined(__CUDACC__) || defined(__HIPCC__)
__host__ __device__
#endif
    inline void
    unpack_scale_min_k4(int s, const uint8_t* scales, int& sc, int& mn) {
  if (s < 4) {
    sc = scales[s] & 63;
    mn = scales[s + 4] & 63;
  } else {
    sc = (scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4);
    mn = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
  }
}

// Code i (0..255) of a Q6_K block, 0..63 (the value is d * scales[i / 16] * (code - 32)): for
// i = 128 h + 32 p + l, the nibble p / 2 of ql[64 h + l + 32 (p & 1)] and bits 2p..2p+1 of
// qh[32 h + l] above it.
#if defined(__CUDACC__) || defined(__HIPCC__)
__host__ __device__
#endif
    inline int
    q6k_code(const BlockQ6K& b, int i) {
  const int h = i / 128, p = i % 128 / 32, l = i % 32;
  const int low = b.ql[64 * h + l + 32 * (p & 1)] >> (4 * (p / 2)) & 15;
  return low | (b.qh[32 * h + l] >> (2 * p) & 3) << 4;
}

}  // namespace sy::dtype
