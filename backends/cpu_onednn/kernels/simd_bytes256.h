// The byte operations of the AVX2 and AVX-512 vector layers: 32 int8 weight codes in one
// 256-bit vector (B), as the block decoders (quant_decode.inc) use them. Shifts are per byte,
// zeros shifted in; and the 8-bit dot products of those codes with 8-bit activations (with
// SY_SIMD_VNNI: vpdpbusd / vpdpwssd, EVEX under -mavx512vnni, else AVX-VNNI's VEX forms).
// Include only inside a path namespace, from simd_avx2.h or simd_avx512.h (each path's copy is
// compiled with its own flags). No include guard, by design.

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

  // ---- 8-bit dot products (ActFormat::q8_32 / q8_256): one 32-value chunk per 256-bit vector,
  // shared by AVX2 and AVX-512 (whose layer adds Codes8x2, two chunks per vector, for the
  // super-block types: at one chunk Q4_K's decode was compute-bound below the memory's rate).
  using BI = __m256i;  // 8 int32 lanes
  using BW = __m256i;  // 16 int16 lanes
  using BF = __m256;   // 8 floats
  static BI bi_zero() { return _mm256_setzero_si256(); }
  static BI bi_load(const int32_t* p) { return _mm256_loadu_si256((const __m256i*)p); }
  static BI bi_add(BI a, BI b) { return _mm256_add_epi32(a, b); }
  static BF bf_zero() { return _mm256_setzero_ps(); }
  static BF bf_set1(float v) { return _mm256_set1_ps(v); }
  static BF bf_add(BF a, BF b) { return _mm256_add_ps(a, b); }
  static BF bf_fma_i(BI a, BF b, BF c) { return _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), b, c); }
  static BF bf_load(const float* p) { return _mm256_loadu_ps(p); }
  static void bf_store(float* p, BF v) { _mm256_storeu_ps(p, v); }
  static float bf_hsum(BF v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // Lane j = bf_hsum(v[j]), with its additions in its order (halves; lanes 0 + 2 and 1 + 3;
  // the two), so results do not depend on which of the two reduced them.
  static BF bf_hsums(const BF (&v)[8]) {
    __m256 h[4];  // lanes 0..3: v[i]'s halves summed, lanes 4..7: v[4 + i]'s
    for (int i = 0; i < 4; ++i)
      h[i] = _mm256_add_ps(_mm256_permute2f128_ps(v[i], v[4 + i], 0x20),
                           _mm256_permute2f128_ps(v[i], v[4 + i], 0x31));
    const __m256 t0 = _mm256_unpacklo_ps(h[0], h[1]), t1 = _mm256_unpackhi_ps(h[0], h[1]);
    const __m256 t2 = _mm256_unpacklo_ps(h[2], h[3]), t3 = _mm256_unpackhi_ps(h[2], h[3]);
    // c_l: lane l of h[0..3] (one 128-bit half each for v[0..3] and v[4..7])
    const __m256 c0 = _mm256_shuffle_ps(t0, t2, 0x44), c1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 c2 = _mm256_shuffle_ps(t1, t3, 0x44), c3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    return _mm256_add_ps(_mm256_add_ps(c0, c2), _mm256_add_ps(c1, c3));
  }
  static B b_abs(B a) { return _mm256_abs_epi8(a); }
  // x * sign(w) per byte (0 where w is 0): with b_abs(w) it moves w's sign onto x, so the
  // unsigned-by-signed products below take signed codes (|x| <= 127 keeps it in range).
  static B b_sign(B x, B w) { return _mm256_sign_epi8(x, w); }
  // acc[l] + sum of u[4l + i] * s[4l + i] (u unsigned, s signed), exact while every pair sum of
  // maddubs stays within int16: |u| <= 128, |s| <= 127 here.
  static BI dot_u8(BI acc, B u, B s) {
#if defined(SY_SIMD_VNNI) && defined(__AVX512VNNI__)
    return _mm256_dpbusd_epi32(acc, u, s);
#elif defined(SY_SIMD_VNNI)
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_add_epi32(acc,
                            _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
  }
  // As dot_u8, each product pair times its 16-value group's scale first: acc[l] + sc[2l] *
  // (u s pairs 2l) + sc[2l + 1] * (pair 2l + 1), with sc the int16 lanes of bw_group_scales.
  static BI dot_u8_scaled(BI acc, B u, B s, BW sc) {
    const __m256i p = _mm256_maddubs_epi16(u, s);
#if defined(SY_SIMD_VNNI) && defined(__AVX512VNNI__)
    return _mm256_dpwssd_epi32(acc, p, sc);
#elif defined(SY_SIMD_VNNI)
    return _mm256_dpwssd_avx_epi32(acc, p, sc);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, sc));
#endif
  }
  // A super-block's 16 group scales as int8, built in a register (bytes stored one by one and
  // reloaded as a vector would stall on store forwarding every super-block).
  using BS = __m128i;
  static BS bs_load(const void* p) { return _mm_loadu_si128((const __m128i*)p); }
  static BS bs_low_nibbles(const void* p) { return _mm_and_si128(bs_load(p), _mm_set1_epi8(15)); }
  static BS bs_high_nibbles(const void* p) {
    return _mm_and_si128(_mm_srli_epi16(bs_load(p), 4), _mm_set1_epi8(15));
  }
  // byte c of c8 for groups 2c and 2c + 1
  static BS bs_chunks(uint64_t c8) {
    const __m128i v = _mm_cvtsi64_si128((long long)c8);
    return _mm_unpacklo_epi8(v, v);
  }
  static BS bs_set(uint64_t lo, uint64_t hi) {
    return _mm_set_epi64x((long long)hi, (long long)lo);
  }
  // The int16 scales of chunk c's two 16-value groups, group 2c for lanes 0..7 (the pairs of
  // values 0..15) and group 2c + 1 for lanes 8..15.
  static BW bw_group_scales(BS g16, int c) {
    const __m128i idx = _mm_set_epi64x((long long)(0x0101010101010101ull * (2 * c + 1)),
                                       (long long)(0x0101010101010101ull * (2 * c)));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(g16, idx));
  }
};
