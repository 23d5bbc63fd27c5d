// The portable layer of the dispatched kernels: the vector interface of simd_avx2.h over plain
// arrays of 8 lanes, so the same kernel source runs on any x86-64 (and is the path every other
// one is tested against). Include inside the scalar kernel file's path namespace.
// No include guard: included once per path namespace, by design.

struct Simd {
  static constexpr int kF = 8;
  static constexpr int kI16 = 16;
  struct F {
    float v[kF];
  };
  struct I {
    int32_t v[kF];
  };
  struct W {
    int16_t v[kI16];
  };

  static F zero() { return set1(0.0f); }
  static F set1(float x) {
    F r;
    for (float& v : r.v) v = x;
    return r;
  }
  static F load(const float* p) {
    F r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static void store(float* p, F v) { std::memcpy(p, v.v, sizeof v.v); }
  template <class Op>
  static F map2(F a, F b, Op op) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = op(a.v[l], b.v[l]);
    return r;
  }
  static F add(F a, F b) {
    return map2(a, b, [](float x, float y) { return x + y; });
  }
  static F sub(F a, F b) {
    return map2(a, b, [](float x, float y) { return x - y; });
  }
  static F mul(F a, F b) {
    return map2(a, b, [](float x, float y) { return x * y; });
  }
  static F max(F a, F b) {
    return map2(a, b, [](float x, float y) { return x > y ? x : y; });
  }
  static F fma(F a, F b, F c) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = std::fma(a.v[l], b.v[l], c.v[l]);
    return r;
  }
  static F abs(F a) {
    for (float& v : a.v) v = std::fabs(v);
    return a;
  }
  static float hsum(F v) {
    float s = 0.0f;
    for (float x : v.v) s += x;
    return s;
  }
  static F hsums(const F (&v)[kF]) {
    F r;
    for (int j = 0; j < kF; ++j) r.v[j] = hsum(v[j]);
    return r;
  }
  static float hmax(F v) {
    float m = v.v[0];
    for (float x : v.v) m = x > m ? x : m;
    return m;
  }

  static float f16_scalar(uint16_t h) { return ::sy::dtype::f16_to_f32(h); }
  static uint16_t f16_from(float f) { return ::sy::dtype::f32_to_f16(f); }  // nearest even
  static F load_f16(const uint16_t* p) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = f16_scalar(p[l]);
    return r;
  }
  static F load_bf16(const uint16_t* p) {
    F r;
    for (int l = 0; l < kF; ++l) {
      const uint32_t b = (uint32_t)p[l] << 16;
      std::memcpy(&r.v[l], &b, 4);
    }
    return r;
  }
  static void store_f16(uint16_t* p, F v) {
    for (int l = 0; l < kF; ++l) p[l] = f16_from(v.v[l]);
  }

  static W load_i8_as_i16(const int8_t* p) {
    W r;
    for (int l = 0; l < kI16; ++l) r.v[l] = p[l];
    return r;
  }
  static void store_round_i16(int16_t* p, F v) {
    for (int l = 0; l < kF; ++l) p[l] = (int16_t)std::lrint(v.v[l]);  // default mode: ties to even
  }
  static void store_round_i8(int8_t* p, F v) {
    for (int l = 0; l < kF; ++l) p[l] = (int8_t)std::lrint(v.v[l]);
  }
  static W load_i16(const int16_t* p) {
    W r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static I izero() {
    I r;
    for (int32_t& v : r.v) v = 0;
    return r;
  }
  static I dot_i16(I acc, W a, W b) {
    for (int l = 0; l < kF; ++l)
      acc.v[l] += (int32_t)a.v[2 * l] * b.v[2 * l] + (int32_t)a.v[2 * l + 1] * b.v[2 * l + 1];
    return acc;
  }
  static F to_f32(I v) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = (float)v.v[l];
    return r;
  }

  // ---- 32 int8 weight codes (B) and their widening to int16: see simd_avx2.h.
  struct B {
    int8_t v[32];
  };
  static constexpr int kW32 = 2;
  template <class Op>
  static B b_map(B a, Op op) {
    for (int8_t& x : a.v) x = (int8_t)op((uint8_t)x);
    return a;
  }
  static B b_load(const uint8_t* p) {
    B r;
    std::memcpy(r.v, p, 32);
    return r;
  }
  static B b_set1(int v) {
    B r;
    for (int8_t& x : r.v) x = (int8_t)v;
    return r;
  }
  static B b_and(B a, B b) {
    for (int j = 0; j < 32; ++j) a.v[j] &= b.v[j];
    return a;
  }
  static B b_or(B a, B b) {
    for (int j = 0; j < 32; ++j) a.v[j] |= b.v[j];
    return a;
  }
  static B b_sub(B a, B b) {
    for (int j = 0; j < 32; ++j) a.v[j] = (int8_t)(a.v[j] - b.v[j]);
    return a;
  }
  static B b_shr(B a, int n) {
    return b_map(a, [n](uint8_t x) { return x >> n; });
  }
  static B b_shl(B a, int n) {
    return b_map(a, [n](uint8_t x) { return (x << n) & 0xFF; });
  }
  static B b_nibbles(const uint8_t* p) {
    B r;
    for (int j = 0; j < 16; ++j) {
      r.v[j] = (int8_t)(p[j] & 15);
      r.v[j + 16] = (int8_t)(p[j] >> 4);
    }
    return r;
  }
  static B b_lookup(const int8_t* table, B idx) {
    for (int8_t& x : idx.v) x = table[x & 15];
    return idx;
  }
  static B b_bits(uint32_t bits, int set) {
    B r;
    for (int j = 0; j < 32; ++j) r.v[j] = (int8_t)((bits >> j) & 1 ? set : 0);
    return r;
  }
  static B b_test(B a, int bit, int set) {
    return b_map(a, [bit, set](uint8_t x) { return (x >> bit) & 1 ? set : 0; });
  }
  static void b_widen(B b, W (&w)[kW32]) {
    for (int j = 0; j < 32; ++j) w[j / kI16].v[j % kI16] = b.v[j];
  }
  struct S {
    int16_t v[16];
  };
  static S s_groups(const int8_t* g16) {
    S s;
    for (int g = 0; g < 16; ++g) s.v[g] = g16[g];
    return s;
  }
  static S s_chunks(uint64_t c8) {
    S s;
    for (int c = 0; c < 8; ++c) s.v[c] = (int8_t)(c8 >> (8 * c));
    return s;
  }
  static void w_scale_groups(W (&w)[kW32], const S& s, int c) {
    for (int j = 0; j < kI16; ++j) {
      w[0].v[j] = (int16_t)(w[0].v[j] * s.v[2 * c]);
      w[1].v[j] = (int16_t)(w[1].v[j] * s.v[2 * c + 1]);
    }
  }
  static void w_scale_chunk(W (&w)[kW32], const S& s, int c) {
    for (int i = 0; i < kW32; ++i)
      for (int j = 0; j < kI16; ++j) w[i].v[j] = (int16_t)(w[i].v[j] * s.v[c]);
  }

  // ---- 8-bit dot products: simd_bytes256.h's, lane for lane.
  using BI = I;
  struct BW {
    int16_t v[16];
  };
  using BF = F;
  static BI bi_zero() { return izero(); }
  static BI bi_load(const int32_t* p) {
    BI a;
    std::memcpy(a.v, p, sizeof a.v);
    return a;
  }
  static BI bi_add(BI a, BI b) {
    for (int l = 0; l < kF; ++l) a.v[l] += b.v[l];
    return a;
  }
  static BF bf_zero() { return zero(); }
  static BF bf_of(F v) { return v; }
  static BF bf_set1(float v) { return set1(v); }
  static BF bf_add(BF a, BF b) { return add(a, b); }
  static BF bf_fma_i(BI a, BF b, BF c) { return fma(to_f32(a), b, c); }
  static BF bf_load(const float* p) { return load(p); }
  static void bf_store(float* p, BF v) { store(p, v); }
  static float bf_hsum(BF v) {  // the AVX2 order: halves, then pairs, then the last two
    float h[4];
    for (int l = 0; l < 4; ++l) h[l] = v.v[l] + v.v[l + 4];
    return (h[0] + h[2]) + (h[1] + h[3]);
  }
  static BF bf_hsums(const BF (&v)[8]) {
    BF r;
    for (int j = 0; j < 8; ++j) r.v[j] = bf_hsum(v[j]);
    return r;
  }
  static B b_abs(B a) {
    for (int8_t& x : a.v) x = (int8_t)(x < 0 ? -x : x);  // -128 stays 0x80, read as 128 below
    return a;
  }
  static B b_sign(B x, B w) {
    for (int j = 0; j < 32; ++j) x.v[j] = (int8_t)(w.v[j] < 0 ? -x.v[j] : w.v[j] ? x.v[j] : 0);
    return x;
  }
  static BI dot_u8(BI acc, B u, B s) {
    for (int l = 0; l < kF; ++l)
      for (int i = 0; i < 4; ++i) acc.v[l] += (int32_t)(uint8_t)u.v[4 * l + i] * s.v[4 * l + i];
    return acc;
  }
  static BI dot_u8_scaled(BI acc, B u, B s, BW sc) {
    for (int l = 0; l < kF; ++l)
      for (int i = 0; i < 2; ++i) {
        const int j = 2 * l + i;
        const int32_t p = (int32_t)(uint8_t)u.v[2 * j] * s.v[2 * j] +
                          (int32_t)(uint8_t)u.v[2 * j + 1] * s.v[2 * j + 1];
        acc.v[l] += p * sc.v[j];
      }
    return acc;
  }
  struct BS {
    int8_t v[16];
  };
  static BS bs_load(const void* p) {
    BS r;
    std::memcpy(r.v, p, 16);
    return r;
  }
  static BS bs_low_nibbles(const void* p) {
    BS r = bs_load(p);
    for (int8_t& x : r.v) x &= 15;
    return r;
  }
  static BS bs_high_nibbles(const void* p) {
    BS r = bs_load(p);
    for (int8_t& x : r.v) x = (int8_t)(((uint8_t)x >> 4) & 15);
    return r;
  }
  static BS bs_chunks(uint64_t c8) {
    BS r;
    for (int g = 0; g < 16; ++g) r.v[g] = (int8_t)(c8 >> (8 * (g / 2)));
    return r;
  }
  static BS bs_set(uint64_t lo, uint64_t hi) {
    BS r;
    std::memcpy(r.v, &lo, 8);
    std::memcpy(r.v + 8, &hi, 8);
    return r;
  }
  static BW bw_group_scales(BS g16, int c) {
    BW r;
    for (int j = 0; j < 16; ++j) r.v[j] = g16.v[2 * c + j / 8];
    return r;
  }

  static F f_from_bs(const BS& v, int j) { return f_from_i8(v.v + j); }
  static F f_from_i8(const int8_t* p) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = (float)p[l];
    return r;
  }
  static void w_to_f32(W w, F* out) {
    for (int j = 0; j < kI16; ++j) out[j / kF].v[j % kF] = (float)w.v[j];
  }

  static void prefetch(const void*) {}

  static F exp(F x) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = std::exp(x.v[l]);
    return r;
  }
};
