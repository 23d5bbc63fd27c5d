// The dtype table's codecs against the independent decoder in quant_oracle.h: every quantised
// type, block by block, on random blocks and on hand-built ones that pin down the sign, the
// scale/min bit packing and the code positions; and the reference quantizers' round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "quant_oracle.h"
#include "switchyard/common/dtype.h"
#include "test_rng.h"

namespace {

namespace dtype = sy::dtype;
namespace oracle = sy::test::oracle;

struct Rng : sy::test::XorShiftRng {
  explicit Rng(uint64_t seed) : XorShiftRng(seed, 12) {}
  uint8_t byte() { return (uint8_t)(next() >> 56); }
  float normal() {  // Box-Muller, enough for test data
    const float u1 = std::max(uniform(0, 1), 1e-7f), u2 = uniform(0, 1);
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853f * u2);
  }
};

const uint32_t kBlockTypes[] = {SY_DTYPE_Q4_0, SY_DTYPE_Q4_1, SY_DTYPE_Q5_0,   SY_DTYPE_Q5_1,
                                SY_DTYPE_Q8_0, SY_DTYPE_Q2_K, SY_DTYPE_Q3_K,   SY_DTYPE_Q4_K,
                                SY_DTYPE_Q5_K, SY_DTYPE_Q6_K, SY_DTYPE_IQ4_NL, SY_DTYPE_IQ4_XS,
                                SY_DTYPE_MXFP4};

uint16_t f16_bits(float f) {
  const _Float16 h = (_Float16)f;
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
void put_half(uint8_t* p, float f) {
  const uint16_t b = f16_bits(f);
  p[0] = (uint8_t)(b & 0xff), p[1] = (uint8_t)(b >> 8);
}

// Byte offsets of a block's f16 fields (ggml-common.h), so random blocks get finite scales.
std::vector<int> half_fields(uint32_t t) {
  switch (t) {
    case SY_DTYPE_Q4_0:
    case SY_DTYPE_Q5_0:
    case SY_DTYPE_Q8_0:
    case SY_DTYPE_IQ4_NL:
    case SY_DTYPE_IQ4_XS:
      return {0};
    case SY_DTYPE_Q4_1:
    case SY_DTYPE_Q5_1:
    case SY_DTYPE_Q4_K:
    case SY_DTYPE_Q5_K:
      return {0, 2};
    case SY_DTYPE_Q2_K:
      return {80, 82};
    case SY_DTYPE_Q3_K:
      return {108};
    case SY_DTYPE_Q6_K:
      return {208};
    default:
      return {};
  }
}

// Library decode of n values of type t.
std::vector<float> library_decode(uint32_t t, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> out(n, NAN);
  dtype::row_to_f32(t, bytes.data(), out.data(), n);
  return out;
}

// Compares bit for bit; names the first differing block and value.
::testing::AssertionResult same_values(uint32_t t, const std::vector<float>& got,
                                       const std::vector<float>& want) {
  const int bs = oracle::format(t).values;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], 4) != 0)
      return ::testing::AssertionFailure()
             << dtype::name(t) << " block " << i / bs << " value " << i % bs << ": library "
             << got[i] << ", oracle " << want[i];
  return ::testing::AssertionSuccess();
}

TEST(QuantFormats, TableMatchesGgmlBlockSizes) {
  for (uint32_t t : kBlockTypes) {
    SCOPED_TRACE(dtype::name(t));
    EXPECT_EQ(dtype::block_elems(t), oracle::format(t).values);
    EXPECT_EQ(dtype::block_bytes(t), oracle::format(t).bytes);
    EXPECT_TRUE(dtype::is_weight(t));
    EXPECT_TRUE((dtype::weight_mask() >> t) & 1u);
  }
  EXPECT_FALSE(dtype::is_known(SY_DTYPE_I32 + 1000));
  EXPECT_FALSE(dtype::is_weight(SY_DTYPE_I32));
  EXPECT_STREQ(dtype::name(SY_DTYPE_Q4_K), "Q4_K");
  EXPECT_STREQ(dtype::name(SY_DTYPE_IQ4_XS), "IQ4_XS");
  EXPECT_EQ(dtype::row_bytes(SY_DTYPE_Q6_K, 768), 3 * 210);
}

// Random bytes everywhere (codes, packed scales, signs), finite random f16 scales.
TEST(QuantFormats, RandomBlocksDecodeAsTheOracle) {
  for (uint32_t t : kBlockTypes) {
    const oracle::Format f = oracle::format(t);
    const int blocks = 64;
    Rng rng(t);
    std::vector<uint8_t> bytes((size_t)blocks * f.bytes);
    for (auto& b : bytes) b = rng.byte();
    for (int i = 0; i < blocks; ++i)
      for (int off : half_fields(t)) put_half(&bytes[i * f.bytes + off], rng.uniform(-2, 2));
    const int64_t n = (int64_t)blocks * f.values;
    EXPECT_TRUE(same_values(t, library_decode(t, bytes, n), oracle::decode(t, bytes.data(), n)));
  }
}

// ---- hand-built blocks: one property each, with the expected values written out ----

// Q4_0 / Q5_0 are offset codes: code 0 is -8 (-16), the fifth bit of Q5 value v is bit v of qh.
TEST(QuantFormats, LegacySignsAndFifthBit) {
  std::vector<uint8_t> q4(18, 0);
  put_half(q4.data(), 0.5f);
  q4[2 + 3] = 0xF0;  // value 3: code 0 (-8), value 19: code 15 (+7)
  auto v4 = library_decode(SY_DTYPE_Q4_0, q4, 32);
  EXPECT_EQ(v4[3], -4.0f);
  EXPECT_EQ(v4[19], 3.5f);
  EXPECT_EQ(v4[0], -4.0f);  // every other code is 0 too

  std::vector<uint8_t> q5(22, 0);
  put_half(q5.data(), 1.0f);
  q5[2 + 3] = 0x80;   // qh bit 31: value 31 gets +16
  q5[6 + 15] = 0xF0;  // value 31's low nibble 15
  auto v5 = library_decode(SY_DTYPE_Q5_0, q5, 32);
  EXPECT_EQ(v5[31], 15.0f);   // 31 - 16
  EXPECT_EQ(v5[15], -16.0f);  // code 0
  EXPECT_EQ(v5[30], -16.0f);
}

// Q4_K / Q5_K: 6-bit scales and mins, the high two bits of sub-blocks 4..7 in the top bits of
// bytes 0..7; value = d * scale * q - dmin * min.
TEST(QuantFormats, Q4KAndQ5KScaleMinPacking) {
  // Scales 17 + 6s and mins 40 - 5s use bits 4-5 for most sub-blocks.
  int sc[8], mn[8];
  for (int s = 0; s < 8; ++s) sc[s] = 17 + 6 * s, mn[s] = 40 - 5 * s;
  uint8_t packed[12] = {};
  for (int s = 0; s < 4; ++s) {
    packed[s] = (uint8_t)(sc[s] | (sc[s + 4] >> 4) << 6);
    packed[s + 4] = (uint8_t)(mn[s] | (mn[s + 4] >> 4) << 6);
    packed[s + 8] = (uint8_t)((sc[s + 4] & 15) | (mn[s + 4] & 15) << 4);
  }
  for (uint32_t t : {SY_DTYPE_Q4_K, SY_DTYPE_Q5_K}) {
    SCOPED_TRACE(dtype::name(t));
    std::vector<uint8_t> b(oracle::format(t).bytes, 0);
    put_half(&b[0], 0.25f);  // d
    put_half(&b[2], 0.5f);   // dmin
    std::memcpy(&b[4], packed, 12);
    const int qs = t == SY_DTYPE_Q4_K ? 16 : 48;
    for (int i = 0; i < 128; ++i) b[qs + i] = 0x53;  // even sub-blocks code 3, odd code 5
    if (t == SY_DTYPE_Q5_K) b[16 + 7] = 0x80;        // lane 7 of sub-block 7 gets +16
    const auto v = library_decode(t, b, 256);
    for (int s = 0; s < 8; ++s) {
      const int q = s % 2 ? 5 : 3;
      EXPECT_EQ(v[32 * s], 0.25f * sc[s] * q - 0.5f * mn[s]) << "sub-block " << s;
    }
    if (t == SY_DTYPE_Q5_K) {
      EXPECT_EQ(v[32 * 7 + 7], 0.25f * sc[7] * 21 - 0.5f * mn[7]);
    }
  }
}

// Q3_K: signed 6-bit scales (stored + 32), codes 0..7 read as -4..3 with hmask's bit clear
// meaning the code is 4 lower.
TEST(QuantFormats, Q3KSignedScalesAndHighMask) {
  std::vector<uint8_t> b(110, 0);
  put_half(&b[108], 1.0f);
  const int scale[16] = {-32, -1, 0, 1, 31, -17, 16, 5, -5, 9, -9, 20, -20, 2, -2, 30};
  for (int s = 0; s < 16; ++s) {
    const int u = scale[s] + 32;
    b[96 + s % 8] |= (uint8_t)((u & 15) << (4 * (s / 8)));
    b[96 + 8 + s % 4] |= (uint8_t)((u >> 4) << (2 * (s / 4)));
  }
  for (int i = 0; i < 64; ++i) b[32 + i] = 0xE4;  // planes 0..3: low codes 0, 1, 2, 3
  b[5] = 0x0F;  // hmask lane 5: bits 0..3 set (half 0, every plane): that lane is not lowered
  const auto v = library_decode(SY_DTYPE_Q3_K, b, 256);
  for (int half = 0; half < 2; ++half)
    for (int plane = 0; plane < 4; ++plane)
      for (int lane : {0, 5, 20}) {
        const int i = 128 * half + 32 * plane + lane;
        const bool high = half == 0 && lane == 5;
        EXPECT_EQ(v[i], (float)scale[i / 16] * (float)(plane - (high ? 0 : 4))) << i;
      }
}

// Q6_K: int8 sub-block scales, 6-bit codes minus 32; Q2_K: 4-bit scale and min.
TEST(QuantFormats, Q6KAndQ2KScales) {
  std::vector<uint8_t> b6(210, 0);
  put_half(&b6[208], 0.5f);
  for (int s = 0; s < 16; ++s) b6[192 + s] = (uint8_t)(int8_t)(s % 2 ? -3 * s : 2 * s + 1);
  b6[0] = 0x2F;    // value 0 low nibble 15, value 64 low nibble 2
  b6[128] = 0xC3;  // value 0 high bits 3, value 96 high bits 3
  const auto v6 = library_decode(SY_DTYPE_Q6_K, b6, 256);
  EXPECT_EQ(v6[0], 0.5f * 1 * (float)(15 + 48 - 32));
  EXPECT_EQ(v6[64], 0.5f * 9 * (float)(2 - 32));
  EXPECT_EQ(v6[96], 0.5f * 13 * (float)(48 - 32));
  EXPECT_EQ(v6[32], 0.5f * 5 * -32.0f);
  EXPECT_EQ(v6[16], 0.5f * -3 * -32.0f);  // a negative sub-block scale

  std::vector<uint8_t> b2(84, 0);
  put_half(&b2[80], 0.25f);  // d
  put_half(&b2[82], 2.0f);   // dmin
  for (int s = 0; s < 16; ++s) b2[s] = (uint8_t)((s % 16) | ((15 - s) << 4));
  b2[16 + 32 + 1] = 0xB1;  // half 1, lane 1: planes 0..3 codes 1, 0, 3, 2
  const auto v2 = library_decode(SY_DTYPE_Q2_K, b2, 256);
  const int codes[4] = {1, 0, 3, 2};
  for (int p = 0; p < 4; ++p) {
    const int i = 128 + 32 * p + 1, s = i / 16;
    EXPECT_EQ(v2[i], 0.25f * s * codes[p] - 2.0f * (15 - s)) << i;
  }
}

// IQ4_NL / IQ4_XS: the codes index the non-linear levels; IQ4_XS scales are 6 bits minus 32.
TEST(QuantFormats, Iq4LevelsAndScales) {
  std::vector<uint8_t> nl(18, 0);
  put_half(nl.data(), 1.0f);
  for (int j = 0; j < 16; ++j) nl[2 + j] = (uint8_t)(j | (15 - j) << 4);
  const auto vn = library_decode(SY_DTYPE_IQ4_NL, nl, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(vn[j], (float)oracle::kLevels[j]);
    EXPECT_EQ(vn[16 + j], (float)oracle::kLevels[15 - j]);
  }
  std::vector<uint8_t> xs(136, 0);
  put_half(xs.data(), 0.5f);
  const int ls[8] = {0, 63, 31, 32, 33, 1, 48, 15};
  uint16_t sh = 0;
  for (int s = 0; s < 8; ++s) {
    xs[4 + s / 2] |= (uint8_t)((ls[s] & 15) << (4 * (s % 2)));
    sh |= (uint16_t)((ls[s] >> 4) << (2 * s));
  }
  xs[2] = (uint8_t)(sh & 0xff), xs[3] = (uint8_t)(sh >> 8);
  for (int i = 0; i < 128; ++i) xs[8 + i] = 0x0F;  // low nibble 15, high 0
  const auto vx = library_decode(SY_DTYPE_IQ4_XS, xs, 256);
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(vx[32 * s], 0.5f * (ls[s] - 32) * 113.0f) << s;
    EXPECT_EQ(vx[32 * s + 16], 0.5f * (ls[s] - 32) * -127.0f) << s;
  }
}

// MXFP4: the codes are E2M1 (bit 3 the sign), the scale a bare power of two 2^(e - 127); the
// quantizer picks e = floor(log2(max |x|)) - 2 and each value's nearest level.
TEST(QuantFormats, Mxfp4LevelsAndScale) {
  std::vector<uint8_t> b(17, 0);
  b[0] = 127 + 3;  // 2^3
  for (int j = 0; j < 16; ++j) b[1 + j] = (uint8_t)(j | (15 - j) << 4);
  const auto v = library_decode(SY_DTYPE_MXFP4, b, 32);
  const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(v[j], 8.0f * e2m1[j]) << j;
    EXPECT_EQ(v[16 + j], 8.0f * e2m1[15 - j]) << j;
  }
  // max |x| = 6: e = 127 + 2 - 2 (scale 1); 2.6 lies nearer 3 than 2, -0.2 nearer 0 than -0.5.
  std::vector<float> x(32, 0.0f);
  x[0] = 6.0f, x[1] = 2.6f, x[2] = -0.2f, x[3] = -6.0f;
  std::vector<uint8_t> q(17);
  dtype::row_from_f32(SY_DTYPE_MXFP4, x.data(), q.data(), 32);
  EXPECT_EQ(q[0], 127);
  const auto y = library_decode(SY_DTYPE_MXFP4, q, 32);
  EXPECT_EQ(y[0], 6.0f);
  EXPECT_EQ(y[1], 3.0f);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], -6.0f);
}

// ---- the reference quantizers ----

struct RoundTrip {
  uint32_t type;
  double max_rel_rmse;  // sqrt(mean err^2 / mean x^2) on N(0, 1) data
};

// Bounds: a uniform quantizer's error is step / sqrt(12); with a block's range about +-2.2 sigma
// for Gaussian data that is ~0.005 for 8 bits and doubles per bit removed (Q8_0 0.005, 6 bits
// ~0.02, 5 bits ~0.04, 4 bits ~0.08, 3 bits ~0.15, 2 bits ~0.3). Measured values (notes/quant.md)
// sit at those; the bounds leave ~15% headroom on this fixed data. A wrong scale or layout gives
// errors near 1.
const RoundTrip kRoundTrips[] = {
    {SY_DTYPE_Q8_0, 0.0065},  {SY_DTYPE_Q6_K, 0.021}, {SY_DTYPE_Q5_1, 0.044},
    {SY_DTYPE_Q5_0, 0.05},    {SY_DTYPE_Q5_K, 0.042}, {SY_DTYPE_Q4_1, 0.09},
    {SY_DTYPE_Q4_0, 0.1},     {SY_DTYPE_Q4_K, 0.083}, {SY_DTYPE_IQ4_NL, 0.089},
    {SY_DTYPE_IQ4_XS, 0.089}, {SY_DTYPE_Q3_K, 0.175}, {SY_DTYPE_Q2_K, 0.34},
    {SY_DTYPE_MXFP4, 0.2},
};

TEST(QuantFormats, ReferenceQuantizersRoundTripWithinTheirError) {
  Rng rng(77);
  const int64_t n = 256 * 64;
  std::vector<float> x(n);
  for (float& v : x) v = rng.normal();
  for (const RoundTrip& rt : kRoundTrips) {
    SCOPED_TRACE(dtype::name(rt.type));
    std::vector<uint8_t> q((size_t)dtype::row_bytes(rt.type, n));
    dtype::row_from_f32(rt.type, x.data(), q.data(), n);
    const auto y = library_decode(rt.type, q, n);
    // The quantizer writes the layout the oracle reads.
    EXPECT_TRUE(same_values(rt.type, y, oracle::decode(rt.type, q.data(), n)));
    double err = 0, sig = 0;
    for (int64_t i = 0; i < n; ++i) err += (y[i] - x[i]) * (y[i] - x[i]), sig += x[i] * x[i];
    const double rel = std::sqrt(err / sig);
    std::printf("  %-6s relative RMSE %.4f (bound %.3f)\n", dtype::name(rt.type), rel,
                rt.max_rel_rmse);
    EXPECT_LT(rel, rt.max_rel_rmse);
  }
}

// An all-zero block quantises to zeros (no division by a zero scale) and decodes to zeros.
TEST(QuantFormats, ZeroBlocksStayZero) {
  const std::vector<float> x(512, 0.0f);
  for (uint32_t t : kBlockTypes) {
    SCOPED_TRACE(dtype::name(t));
    std::vector<uint8_t> q((size_t)dtype::row_bytes(t, 512), 0xAB);
    dtype::row_from_f32(t, x.data(), q.data(), 512);
    for (float v : library_decode(t, q, 512)) ASSERT_EQ(std::fabs(v), 0.0f);
  }
}

// Within a format's range, the codes it can represent come back exactly: Q8_0 of k * d.
TEST(QuantFormats, Q8RepresentableValuesAreExact) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = (float)(j - 16) * 0.125f;  // amax 2, d = 2/127
  std::vector<uint8_t> q(34);
  dtype::row_from_f32(SY_DTYPE_Q8_0, x.data(), q.data(), 32);
  EXPECT_EQ((int8_t)q[2 + 0], -127);  // -2 maps to the extreme code
  EXPECT_EQ((int8_t)q[2 + 16], 0);
}

}  // namespace
