// The byte operations of the AVX2 and AVX-512 vector layers: 32 int8 weight codes in one
// 256-bit vector (B), as the block decoders (quant_decode.inc) use them. Shifts are per byte,
// zeros shifted in. Include only inside a path namespace, from simd_avx2.h or simd_avx512.h
// (each path's copy is compiled with its own flags). No include guard, by design.

struct Bytes256 {
  using B = __m256i;
  static B b_load(const uint8_t* p) { return _mm256_loadu_si256((const __m256i*)p); }
  static B b_set1(int v) { return _mm256_set1_epi8((char)v); }
  static B b_and(B a, B b) { return _mm256_and_si256(a, b); }
  static B b_or(B a, B b) { return _mm256_or_si256(a, b); }
  static B b_sub(B a, B b) { return _mm256_sub_epi8(a, b); }
  static B b_shr(B a, int n) {
    return _mm256_and_si256(_mm256_srl_epi16(a, _mm_cvtsi32_si128(n)), b_set1(0xFF >> n));
  }
  static B b_shl(B a, int n) {
    return _mm256_and_si256(_mm256_sll_epi16(a, _mm_cvtsi32_si128(n)), b_set1((0xFF << n) & 0xFF));
  }
  // 16 bytes of packed nibbles: the low nibbles as values 0..15, the high ones as 16..31.
  static B b_nibbles(const uint8_t* p) {
    const __m128i v = _mm_loadu_si128((const __m128i*)p);
    return _mm256_and_si256(
        _mm256_inserti128_si256(_mm256_castsi128_si256(v), _mm_srli_epi16(v, 4), 1), b_set1(15));
  }
  // table[idx] for indices 0..15.
  static B b_lookup(const int8_t* table, B idx) {
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i*)table)),
                               idx);
  }
};
