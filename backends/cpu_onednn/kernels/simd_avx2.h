// The AVX2/FMA/F16C vector layer of the dispatched kernels (8 floats per vector). Include only
// from a kernel file built with -mavx2 -mfma -mf16c, inside that file's path namespace.
// SY_SIMD_VNNI (with -mavxvnni) selects AVX-VNNI's vpdpwssd for the int16 dot product.
// No include guard: included once per path namespace, by design.

#include "simd_bytes256.h"

struct Simd : Bytes256 {
  static constexpr int kF = 8;     // floats (and int32 lanes) per vector
  static constexpr int kI16 = 16;  // int16 values per W vector
  using F = __m256;
  using I = __m256i;  // kF int32 lanes
  using W = __m256i;  // kI16 int16 values

  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }  // a * b + c
  static F abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static float hsum(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // Lane j = hsum(v[j]): an F is a BF here, and bf_hsum adds as hsum does.
  static F hsums(const F (&v)[kF]) { return bf_hsums(v); }
  static float hmax(F v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  static BF bf_of(F v) { return v; }  // an F is a BF here

  static F load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
  }
  static F load_bf16(const uint16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static void store_f16(uint16_t* p, F v) {
    _mm_storeu_si128((__m128i*)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  static float f16_scalar(uint16_t h) { return _cvtsh_ss(h); }

  static W load_i8_as_i16(const int8_t* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)p));
  }
  // kF values rounded to the nearest integer (ties to even) as int16; |v| <= 32767.
  static void store_round_i16(int16_t* p, F v) {
    const __m256i i = _mm256_cvtps_epi32(v);
    _mm_storeu_si128((__m128i*)p,
                     _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1)));
  }
  // kF values rounded to the nearest integer (ties to even) as int8; |v| <= 127.
  static void store_round_i8(int8_t* p, F v) {
    const __m256i i = _mm256_cvtps_epi32(v);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    _mm_storel_epi64((__m128i*)p, _mm_packs_epi16(w, w));
  }
  static W load_i16(const int16_t* p) { return _mm256_loadu_si256((const __m256i*)p); }
  static I izero() { return _mm256_setzero_si256(); }
  // acc[l] + a[2l] * b[2l] + a[2l+1] * b[2l+1], exact in int32
  static I dot_i16(I acc, W a, W b) {
#ifdef SY_SIMD_VNNI
    return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
  }
  static F to_f32(I v) {
    return _mm256_cvtepi32_ps(v);
  }

  // ---- 32 int8 weight codes in value order (B, simd_bytes256.h), decoded from a quantised
  // block, then widened to int16 (W) for the dot products.
  static constexpr int kW32 = 2;  // W vectors per 32 values
  // Byte j = `set` where bit j of `bits` is set, else 0.
  static B b_bits(uint32_t bits, int set) {
    const __m256i spread =
        _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits),
                            _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2,
                                             2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), b_set1(set));
  }
  // Byte j = `set` where bit `bit` of a's byte j is set, else 0.
  static B b_test(B a, int bit, int set) {
    const __m256i m = b_set1(1 << bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(a, m), m), b_set1(set));
  }
  static void b_widen(B b, W (&w)[kW32]) {
    w[0] = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(b));
    w[1] = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(b, 1));
  }
  // A super-block's integer scales, one per 16-value group (s_groups) or per 32-value chunk
  // (s_chunks), and the multiplication of chunk c's codes by theirs.
  struct S {
    alignas(32) int16_t v[16];
  };
  static S s_groups(const int8_t* g16) {
    S s;
    _mm256_store_si256((__m256i*)s.v, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)g16)));
    return s;
  }
  static S s_chunks(uint64_t c8) {
    S s;
    _mm_store_si128((__m128i*)s.v, _mm_cvtepi8_epi16(_mm_cvtsi64_si128((long long)c8)));
    return s;
  }
  static void w_scale_groups(W (&w)[kW32], const S& s, int c) {
    w[0] = _mm256_mullo_epi16(w[0], _mm256_set1_epi16(s.v[2 * c]));
    w[1] = _mm256_mullo_epi16(w[1], _mm256_set1_epi16(s.v[2 * c + 1]));
  }
  static void w_scale_chunk(W (&w)[kW32], const S& s, int c) {
    const __m256i m = _mm256_set1_epi16(s.v[c]);
    w[0] = _mm256_mullo_epi16(w[0], m);
    w[1] = _mm256_mullo_epi16(w[1], m);
  }
  // kF int8 values as floats.
  // Bytes j .. j + kF - 1 of v (j = 0 or 8) as floats.
  static F f_from_bs(BS v, int j) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(j ? _mm_srli_si128(v, 8) : v));
  }
  static F f_from_i8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)p)));
  }
  // The kI16 values of w as kI16 / kF float vectors.
  static void w_to_f32(W w, F* out) {
    out[0] = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(w)));
    out[1] = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(w, 1)));
  }

  static void prefetch(const void* p) {
    _mm_prefetch((const char*)p, _MM_HINT_T0);
  }

  // exp(x), Cephes polynomial: about 2 ulp for normal results; 0 below -88.37 (-inf gives 0),
  // inf above 88.72, NaN stays NaN.
  static F exp(F x_in) {
    __m256 x = _mm256_min_ps(x_in, _mm256_set1_ps(88.7228391f));
    x = _mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f));
    const __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i n = _mm256_cvtps_epi32(fx);
    const __m256i n1 = _mm256_srai_epi32(n, 1), n2 = _mm256_sub_epi32(n, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    y = _mm256_andnot_ps(_mm256_cmp_ps(x_in, _mm256_set1_ps(-88.3762626647949f), _CMP_LT_OQ), y);
    y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()),
                         _mm256_cmp_ps(x_in, _mm256_set1_ps(88.7228391f), _CMP_GT_OQ));
    return _mm256_blendv_ps(y, x_in, _mm256_cmp_ps(x_in, x_in, _CMP_UNORD_Q));
  }
};
