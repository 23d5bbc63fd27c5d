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

  static void prefetch(const void*) {}

  static F exp(F x) {
    F r;
    for (int l = 0; l < kF; ++l) r.v[l] = std::exp(x.v[l]);
    return r;
  }
};
