// The AVX-512 F/BW/VL vector layer of the dispatched kernels (16 floats per vector). Include
// only from a kernel file built with the AVX-512 flags, inside that file's path namespace.
// SY_SIMD_VNNI selects vpdpwssd for the int16 dot product.
// No include guard: included once per path namespace, by design.

#include "simd_bytes256.h"

struct Simd : Bytes256 {
  static constexpr int kF = 16;
  static constexpr int kI16 = 32;
  using F = __m512;
  using I = __m512i;
  using W = __m512i;

  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F abs(F a) { return _mm512_abs_ps(a); }
  static float hsum(F v) { return _mm512_reduce_add_ps(v); }
  static float hmax(F v) { return _mm512_reduce_max_ps(v); }
  // Lane j = hsum(v[j]): halves, quarters, then pairs of lanes across two vectors at a time,
  // 46 instructions for 16 sums (16 hsum calls take about twice that).
  static F hsums(const F (&v)[kF]) {
    F u[8], w[4], y[2];
    for (int i = 0; i < 8; ++i)  // 256-bit halves: v[2i] in lanes 0..7, v[2i + 1] in 8..15
      u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                           _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
    for (int i = 0; i < 4; ++i)  // 128-bit quarters: v[4i + q] in quarter q
      w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0x88),
                           _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0xDD));
    for (int i = 0; i < 2; ++i)  // quarter q: v[q], v[4 + q] (of this pair), twice
      y[i] = _mm512_add_ps(_mm512_unpacklo_ps(w[2 * i], w[2 * i + 1]),
                           _mm512_unpackhi_ps(w[2 * i], w[2 * i + 1]));
    const __m512 z = _mm512_add_ps(  // lane 4q + r: v[4r + q]
        _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(y[0]), _mm512_castps_pd(y[1]))),
        _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(y[0]), _mm512_castps_pd(y[1]))));
    return _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), z);
  }

  static F load_f16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
  }
  static F load_bf16(const uint16_t* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  static void store_f16(uint16_t* p, F v) {
    _mm256_storeu_si256((__m256i*)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  static float f16_scalar(uint16_t h) { return _cvtsh_ss(h); }

  static W load_i8_as_i16(const int8_t* p) {
    return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)p));
  }
  static void store_round_i16(int16_t* p, F v) {
    _mm256_storeu_si256((__m256i*)p, _mm512_cvtsepi32_epi16(_mm512_cvtps_epi32(v)));
  }
  static void store_round_i8(int8_t* p, F v) {
    _mm_storeu_si128((__m128i*)p, _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  static W load_i16(const int16_t* p) { return _mm512_loadu_si512((const void*)p); }
  static I izero() { return _mm512_setzero_si512(); }
  static I dot_i16(I acc, W a, W b) {
#ifdef SY_SIMD_VNNI
    return _mm512_dpwssd_epi32(acc, a, b);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
#endif
  }
  static F to_f32(I v) { return _mm512_cvtepi32_ps(v); }

  // ---- 32 int8 weight codes (B, simd_bytes256.h) and their widening to one int16 W.
  static constexpr int kW32 = 1;
  static B b_bits(uint32_t bits, int set) { return _mm256_maskz_mov_epi8(bits, b_set1(set)); }
  static B b_test(B a, int bit, int set) {
    return _mm256_maskz_mov_epi8(_mm256_test_epi8_mask(a, b_set1(1 << bit)), b_set1(set));
  }
  static void b_widen(B b, W (&w)[kW32]) { w[0] = _mm512_cvtepi8_epi16(b); }
  // The scales in int16 lanes, spread to chunk c's 32 values by vpermw.
  using S = __m512i;
  static S s_groups(const int8_t* g16) {
    return _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)g16)));
  }
  static S s_chunks(uint64_t c8) {
    return _mm512_castsi128_si512(_mm_cvtepi8_epi16(_mm_cvtsi64_si128((long long)c8)));
  }
  static void w_scale_groups(W (&w)[kW32], S s, int c) {
    const __m512i idx =
        _mm512_add_epi16(_mm512_set1_epi16((short)(2 * c)),
                         _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(1), 1));
    w[0] = _mm512_mullo_epi16(w[0], _mm512_permutexvar_epi16(idx, s));
  }
  static void w_scale_chunk(W (&w)[kW32], S s, int c) {
    w[0] = _mm512_mullo_epi16(w[0], _mm512_permutexvar_epi16(_mm512_set1_epi16((short)c), s));
  }
  // The 8-bit dot products two chunks (64 codes) per vector: a super-block in half the
  // operations of Bytes256's, which left Q4_K decode compute-bound below the memory's rate.
  // Chunks c and c + 1 are adjacent values, so one 64-byte load takes their activations.
  struct Codes8x2 {
    static constexpr int kChunks = 2;
    using V = __m512i;   // 64 int8
    using VI = __m512i;  // 16 int32
    using VW = __m512i;  // 32 int16
    static V join(B lo, B hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
    static V load(const int8_t* p) { return _mm512_loadu_si512((const void*)p); }
    // 32 bytes of packed nibbles: the low nibbles as codes 0..31, the high ones as 32..63.
    static V nibbles(const uint8_t* p) {
      const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)p));
      return _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFFFF0000u, v, 4), _mm512_set1_epi8(15));
    }
    static V abs(V a) { return _mm512_abs_epi8(a); }
    // x negated where w < 0 (AVX-512 has no vpsignb); where w is 0, abs(w) zeroes the product.
    static V sign(V x, V w) {
      return _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
    }
    // The int16 scales of groups 2c .. 2c + 3, eight lanes (16 values' pairs) each.
    static VW scales(BS g16, int c) {
      const __m512i lane_group =
          _mm512_set_epi64(0x0003000300030003, 0x0003000300030003, 0x0002000200020002,
                           0x0002000200020002, 0x0001000100010001, 0x0001000100010001, 0, 0);
      const __m512i idx = _mm512_add_epi16(lane_group, _mm512_set1_epi16((short)(2 * c)));
      return _mm512_permutexvar_epi16(idx, _mm512_castsi256_si512(_mm256_cvtepi8_epi16(g16)));
    }
    static VI zero() { return _mm512_setzero_si512(); }
    // As Bytes256::dot_u8_scaled, on 64 codes: the pair sums times the scales as dot_i16.
    static VI dot(VI acc, V u, V s, VW sc) { return dot_i16(acc, _mm512_maddubs_epi16(u, s), sc); }
    static BI fold(VI v) {
      return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    }
    // Two 32-value blocks (dot_rows_q8_sums): acc[l] + sum of u[4l + i] * s[4l + i], as
    // Bytes256::dot_u8 on 64 codes; the lane starts of a bias; block scales per half.
    static VI dot_u8(VI acc, V u, V s) {
#ifdef SY_SIMD_VNNI
      return _mm512_dpbusd_epi32(acc, u, s);
#else
      return _mm512_add_epi32(acc,
                              _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
#endif
    }
    static VI load_i32(const int32_t* p) { return _mm512_loadu_si512((const void*)p); }
    static F halves(float lo, float hi) {
      return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_set1_ps(lo)),
                                                 _mm256_castps_pd(_mm256_set1_ps(hi)), 1));
    }
  };

  // An F folded to the 8 lanes of a BF (sums of lanes l and l + 8).
  static BF bf_of(F v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  }
  static F f_from_bs(BS v, int) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v)); }
  static F f_from_i8(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)p)));
  }
  static void w_to_f32(W w, F* out) {
    out[0] = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm512_castsi512_si256(w)));
    out[1] = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(w, 1)));
  }

  static void prefetch(const void* p) { _mm_prefetch((const char*)p, _MM_HINT_T0); }

  // The AVX2 layer's Cephes exp on 16 lanes.
  static F exp(F x_in) {
    __m512 x = _mm512_min_ps(x_in, _mm512_set1_ps(88.7228391f));
    x = _mm512_max_ps(x, _mm512_set1_ps(-88.3762626647949f));
    const __m512 fx = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i n = _mm512_cvtps_epi32(fx);
    const __m512i n1 = _mm512_srai_epi32(n, 1), n2 = _mm512_sub_epi32(n, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
    const __mmask16 under =
        _mm512_cmp_ps_mask(x_in, _mm512_set1_ps(-88.3762626647949f), _CMP_LT_OQ);
    const __mmask16 over = _mm512_cmp_ps_mask(x_in, _mm512_set1_ps(88.7228391f), _CMP_GT_OQ);
    const __mmask16 nan = _mm512_cmp_ps_mask(x_in, x_in, _CMP_UNORD_Q);
    y = _mm512_mask_blend_ps(under, y, _mm512_setzero_ps());
    y = _mm512_mask_blend_ps(over, y, _mm512_set1_ps(__builtin_inff()));
    return _mm512_mask_blend_ps(nan, y, x_in);
  }
};
