// The 1.1 hybrid ops (ssm_conv, ssm_scan, moe_gate, moe_matmul, moe_combine) of every in-tree
// CPU backend against naive references written here from the formulas in backend.h (no code
// shared with the backends; weights are encoded with the dtype table's codecs and decoded here).
//
// Tolerances: |got - ref| <= rtol * mag, mag = the sum of the magnitudes of the terms that make
// the result (conv: |b| + sum |w x|; scan state: the same recurrence on |terms|; y: sum |h C| +
// |D u|). rtol = 1e-5 (F32 accumulation and the AVX2 exp against double); 1e-4 for reduced
// precision expert weights (compared on the dequantised weights, so only summation order and
// the F32 activations differ), plus, for block-type expert weights, act_quant_bound.h's bound:
// a backend may quantize the activations to 8-bit blocks as llama.cpp's CPU backend does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "act_quant_bound.h"
#include "backend_fixture.h"
#include "op_compare.h"
#include "switchyard/common/dtype.h"
#include "test_rng.h"

namespace {

using sy::test::close;
using sy::test::LoadedPlugin;

constexpr double kF32Tol = 1e-5;
constexpr double kQuantTol = 1e-4;

struct Rng : sy::test::XorShiftRng {
  explicit Rng(uint64_t seed) : XorShiftRng(seed, 7) {}
};

double silu(double v) {
  return v / (1.0 + std::exp(-v));
}

// ---------------------------------------------------------------------------------------------
// Naive references.
namespace naive {

struct Batch {
  std::vector<uint32_t> start;  // seq_token_start
  std::vector<int32_t> slots;
};

// Returns y and mag; updates state ({K-1, C, n_slots}) in place.
void conv(const Batch& b, int64_t C, int64_t K, const std::vector<float>& x,
          const std::vector<float>& w, const std::vector<float>* bias, bool act,
          std::vector<double>& state, std::vector<double>& y, std::vector<double>& mag) {
  y.assign(x.size(), 0.0);
  mag.assign(x.size(), 0.0);
  for (size_t s = 0; s + 1 < b.start.size(); ++s) {
    double* st = &state[b.slots[s] * (K - 1) * C];
    for (int64_t c = 0; c < C; ++c) {
      std::vector<double> win(st + c * (K - 1), st + (c + 1) * (K - 1));
      for (uint32_t t = b.start[s]; t < b.start[s + 1]; ++t) win.push_back(x[t * C + c]);
      for (uint32_t t = b.start[s]; t < b.start[s + 1]; ++t) {
        double v = bias ? (*bias)[c] : 0.0, m = bias ? std::fabs((*bias)[c]) : 0.0;
        for (int64_t k = 0; k < K; ++k) {
          v += w[c * K + k] * win[t - b.start[s] + k];
          m += std::fabs(w[c * K + k] * win[t - b.start[s] + k]);
        }
        y[t * C + c] = act ? silu(v) : v;
        mag[t * C + c] = act ? 1.1 * m : m;  // |silu'| <= 1.1
      }
      for (int64_t k = 0; k < K - 1; ++k) st[c * (K - 1) + k] = win[win.size() - (K - 1) + k];
    }
  }
}

struct ScanIn {
  int64_t D, S;
  std::vector<float> u, dt, a, b, c, dt_bias, d, z;  // empty dt_bias / d / z: absent
};

// state and hmag ({S, D, n_slots}) updated in place; y and ymag returned.
void scan(const Batch& bt, const ScanIn& in, std::vector<double>& state, std::vector<double>& hmag,
          std::vector<double>& y, std::vector<double>& ymag) {
  const int64_t D = in.D, S = in.S;
  y.assign(in.u.size(), 0.0);
  ymag.assign(in.u.size(), 0.0);
  for (size_t s = 0; s + 1 < bt.start.size(); ++s) {
    double* h = &state[bt.slots[s] * S * D];
    double* hm = &hmag[bt.slots[s] * S * D];
    for (uint32_t t = bt.start[s]; t < bt.start[s + 1]; ++t)
      for (int64_t i = 0; i < D; ++i) {
        const double v = in.dt[t * D + i] + (in.dt_bias.empty() ? 0.0 : in.dt_bias[i]);
        const double delta = v > 20 ? v : std::log(1 + std::exp(v));
        const double u = in.u[t * D + i];
        double acc = 0, m = 0;
        for (int64_t n = 0; n < S; ++n) {
          const double da = std::exp(delta * in.a[i * S + n]);
          h[i * S + n] = da * h[i * S + n] + delta * in.b[t * S + n] * u;
          hm[i * S + n] = da * hm[i * S + n] + std::fabs(delta * in.b[t * S + n] * u) +
                          1e-7 * std::fabs(h[i * S + n]);
          acc += h[i * S + n] * in.c[t * S + n];
          m += hm[i * S + n] * std::fabs(in.c[t * S + n]);
        }
        if (!in.d.empty()) acc += in.d[i] * u, m += std::fabs(in.d[i] * u);
        if (!in.z.empty()) {
          const double g = silu(in.z[t * D + i]);
          acc *= g;
          m = m * std::fabs(g) + std::fabs(acc);
        }
        y[t * D + i] = acc;
        ymag[t * D + i] = m;
      }
  }
}

}  // namespace naive

// ---------------------------------------------------------------------------------------------

class HybridOps : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    api_ = &LoadedPlugin::backend(GetParam()).iface();
    ASSERT_EQ(api_->create(nullptr, 0, &be_), SY_OK) << api_->last_error(nullptr);
  }
  void TearDown() override {
    for (sy_buffer_t b : buffers_) api_->buffer_free(be_, b);
    if (be_) api_->destroy(be_);
  }
  sy_buffer_t upload(const void* data, uint64_t size) {
    sy_buffer_t b = nullptr;
    EXPECT_EQ(api_->buffer_alloc(be_, size, &b), SY_OK) << error();
    buffers_.push_back(b);
    if (size) {
      EXPECT_EQ(api_->buffer_write(be_, b, 0, data, size), SY_OK) << error();
    }
    return b;
  }
  static sy_tensor tensor(uint32_t dtype, sy_buffer_t buf, std::vector<int64_t> ne) {
    sy_tensor t = {};
    t.struct_size = sizeof t;
    t.dtype = dtype;
    t.buffer = buf;
    for (int i = 0; i < 4; ++i) t.ne[i] = i < (int)ne.size() ? ne[i] : 1;
    return t;
  }
  template <class T>
  sy_tensor make(uint32_t dtype, const std::vector<T>& v, std::vector<int64_t> ne) {
    return tensor(dtype, upload(v.data(), v.size() * sizeof(T)), std::move(ne));
  }
  sy_tensor f32(const std::vector<float>& v, std::vector<int64_t> ne) {
    return make(SY_DTYPE_F32, v, std::move(ne));
  }
  template <class T = float>
  std::vector<T> read(const sy_tensor& t) {
    std::vector<T> v(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]);
    EXPECT_EQ(api_->synchronize(be_), SY_OK);
    EXPECT_EQ(api_->buffer_read(be_, t.buffer, t.offset, v.data(), v.size() * sizeof(T)), SY_OK);
    return v;
  }
  std::string error() const { return api_->last_error(be_); }

  const sy_backend_iface* api_ = nullptr;
  sy_backend_t be_ = nullptr;
  std::vector<sy_buffer_t> buffers_;
};

std::vector<double> widen(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// ---- ssm_conv ----

struct ConvCase {
  int64_t C, K;
  naive::Batch batch;
  int64_t n_slots;
  bool bias, act;
};

TEST_P(HybridOps, SsmConvMatchesNaiveAndUpdatesOnlyItsSlots) {
  // C = 19 and 24: an AVX2 block plus a scalar tail, and exact blocks; sequences of 5, 0 and 1
  // tokens (prefill chunk, empty, decode) in slots out of order; K = 4 (Mamba) and 1, 6.
  const std::vector<ConvCase> cases = {
      {19, 4, {{0, 5, 5, 6}, {2, 0, 3}}, 4, true, true},
      {24, 4, {{0, 1, 2}, {1, 0}}, 2, false, true},
      {24, 6, {{0, 7}, {0}}, 1, true, false},
      {9, 1, {{0, 3}, {0}}, 1, true, true},
  };
  uint64_t seed = 1;
  for (const auto& cs : cases) {
    SCOPED_TRACE("C=" + std::to_string(cs.C) + " K=" + std::to_string(cs.K));
    Rng rng(seed++);
    const int64_t T = cs.batch.start.back();
    const auto x = rng.vec(cs.C * T, -2, 2), w = rng.vec(cs.K * cs.C), bias = rng.vec(cs.C);
    const auto state0 = rng.vec((cs.K - 1) * cs.C * cs.n_slots, -2, 2);
    sy_tensor tx = f32(x, {cs.C, T}), tw = f32(w, {cs.K, cs.C}), tb = f32(bias, {cs.C});
    sy_tensor ts = f32(state0, {cs.K - 1, cs.C, cs.n_slots});
    sy_tensor ty = f32(std::vector<float>(cs.C * T, NAN), {cs.C, T});
    sy_ssm_conv_args a{};
    a.struct_size = sizeof a;
    a.n_seqs = (uint32_t)cs.batch.slots.size();
    a.x = &tx, a.weight = &tw, a.bias = cs.bias ? &tb : nullptr, a.state = &ts, a.y = &ty;
    a.seq_token_start = cs.batch.start.data();
    a.state_slots = cs.batch.slots.data();
    a.apply_silu = cs.act;
    ASSERT_EQ(api_->ssm_conv(be_, &a), SY_OK) << error();
    std::vector<double> state = widen(state0), y, mag;
    naive::conv(cs.batch, cs.C, cs.K, x, w, cs.bias ? &bias : nullptr, cs.act, state, y, mag);
    EXPECT_TRUE(close(read(ty), y, mag, kF32Tol));
    // The state is a copy of inputs: exact, and untouched for slots no sequence owns.
    const auto got_state = read(ts);
    for (size_t i = 0; i < state.size(); ++i) ASSERT_EQ(got_state[i], (float)state[i]) << i;
  }
}

// Splitting a sequence's tokens over several calls (chunked prefill, then decode) gives the
// same outputs and final state as one call.
TEST_P(HybridOps, SsmConvChunksEqualOneCall) {
  const int64_t C = 40, K = 4, T = 9;
  Rng rng(5);
  const auto x = rng.vec(C * T), w = rng.vec(K * C), bias = rng.vec(C);
  const std::vector<float> zero((K - 1) * C, 0.0f);
  auto run = [&](const std::vector<uint32_t>& cuts) {
    sy_tensor tw = f32(w, {K, C}), tb = f32(bias, {C}), ts = f32(zero, {K - 1, C, 1});
    std::vector<float> out;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      const int64_t n = cuts[i + 1] - cuts[i];
      std::vector<float> part(x.begin() + cuts[i] * C, x.begin() + cuts[i + 1] * C);
      sy_tensor tx = f32(part, {C, n}), ty = f32(std::vector<float>(C * n), {C, n});
      const uint32_t st[2] = {0, (uint32_t)n};
      const int32_t slot = 0;
      sy_ssm_conv_args a{sizeof a, 1, &tx, &tw, &tb, &ts, &ty, st, &slot, 1, 0};
      EXPECT_EQ(api_->ssm_conv(be_, &a), SY_OK) << error();
      const auto y = read(ty);
      out.insert(out.end(), y.begin(), y.end());
    }
    auto s = read(ts);
    out.insert(out.end(), s.begin(), s.end());
    return out;
  };
  const auto whole = run({0, 9}), chunks = run({0, 4, 7, 8, 9}),
             single = run({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(whole, chunks);
  EXPECT_EQ(whole, single);
}

// ---- ssm_scan ----

TEST_P(HybridOps, SsmScanMatchesNaiveWithAndWithoutOptionalInputs) {
  struct Case {
    int64_t D, S;
    naive::Batch batch;
    int64_t n_slots;
    bool dt_bias, d, z;
  };
  // S = 16 (two AVX2 vectors) and 12 (a scalar tail); a 6-token chunk, a decode token and an
  // empty sequence; optional inputs on and off.
  const std::vector<Case> cases = {
      {10, 16, {{0, 6, 7, 7}, {1, 3, 0}}, 4, true, true, true},
      {7, 12, {{0, 4}, {0}}, 1, false, false, false},
      {16, 16, {{0, 1, 2}, {0, 1}}, 2, true, false, true},
  };
  uint64_t seed = 11;
  for (const auto& cs : cases) {
    SCOPED_TRACE("D=" + std::to_string(cs.D) + " S=" + std::to_string(cs.S));
    Rng rng(seed++);
    const int64_t T = cs.batch.start.back(), D = cs.D, S = cs.S;
    naive::ScanIn in;
    in.D = D, in.S = S;
    in.u = rng.vec(D * T, -2, 2);
    in.dt = rng.vec(D * T, -4, 3);
    in.dt[0] = 25.0f;   // above softplus's threshold: delta = dt
    in.dt[1] = -30.0f;  // softplus ~ 1e-13: log1p of a value that rounds 1 + w to 1
    in.dt[2] = -12.0f;
    in.dt[3] = 19.5f;
    in.a = rng.vec(S * D, -3, -0.05f);
    in.b = rng.vec(S * T);
    in.c = rng.vec(S * T);
    if (cs.dt_bias) in.dt_bias = rng.vec(D, -1, 1);
    if (cs.d) in.d = rng.vec(D);
    if (cs.z) in.z = rng.vec(D * T, -3, 3);
    const auto state0 = rng.vec(S * D * cs.n_slots);
    sy_tensor tu = f32(in.u, {D, T}), tdt = f32(in.dt, {D, T}), ta = f32(in.a, {S, D});
    sy_tensor tb = f32(in.b, {S, T}), tc = f32(in.c, {S, T});
    sy_tensor ts = f32(state0, {S, D, cs.n_slots}),
              ty = f32(std::vector<float>(D * T, NAN), {D, T});
    sy_tensor tbias = f32(cs.dt_bias ? in.dt_bias : std::vector<float>(D), {D});
    sy_tensor td = f32(cs.d ? in.d : std::vector<float>(D), {D});
    sy_tensor tz = f32(cs.z ? in.z : std::vector<float>(D * T), {D, T});
    sy_ssm_scan_args a{};
    a.struct_size = sizeof a;
    a.n_seqs = (uint32_t)cs.batch.slots.size();
    a.u = &tu, a.dt = &tdt, a.dt_bias = cs.dt_bias ? &tbias : nullptr, a.a = &ta, a.b = &tb;
    a.c = &tc, a.d = cs.d ? &td : nullptr, a.z = cs.z ? &tz : nullptr, a.state = &ts, a.y = &ty;
    a.seq_token_start = cs.batch.start.data();
    a.state_slots = cs.batch.slots.data();
    ASSERT_EQ(api_->ssm_scan(be_, &a), SY_OK) << error();
    std::vector<double> state = widen(state0), hmag(state.size()), y, ymag;
    for (size_t i = 0; i < state.size(); ++i) hmag[i] = std::fabs(state[i]);
    naive::scan(cs.batch, in, state, hmag, y, ymag);
    EXPECT_TRUE(close(read(ty), y, ymag, kF32Tol));
    EXPECT_TRUE(close(read(ts), state, hmag, kF32Tol));
  }
}

TEST_P(HybridOps, SsmScanChunksEqualOneCall) {
  const int64_t D = 24, S = 16, T = 7;
  Rng rng(21);
  const auto u = rng.vec(D * T), dt = rng.vec(D * T, -3, 1), A = rng.vec(S * D, -2, -0.1f);
  const auto B = rng.vec(S * T), C = rng.vec(S * T), z = rng.vec(D * T), bias = rng.vec(D),
             Dv = rng.vec(D);
  auto run = [&](const std::vector<uint32_t>& cuts) {
    sy_tensor ta = f32(A, {S, D}), ts = f32(std::vector<float>(S * D), {S, D, 1});
    sy_tensor tbias = f32(bias, {D}), td = f32(Dv, {D});
    std::vector<float> out;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      const int64_t t0 = cuts[i], n = cuts[i + 1] - cuts[i];
      auto part = [&](const std::vector<float>& v, int64_t w) {
        return f32(std::vector<float>(v.begin() + t0 * w, v.begin() + (t0 + n) * w), {w, n});
      };
      sy_tensor tu = part(u, D), tdt = part(dt, D), tb = part(B, S), tc = part(C, S),
                tz = part(z, D);
      sy_tensor ty = f32(std::vector<float>(D * n), {D, n});
      const uint32_t st[2] = {0, (uint32_t)n};
      const int32_t slot = 0;
      sy_ssm_scan_args a{sizeof a, 1,   &tu, &tdt, &tbias, &ta, &tb,
                         &tc,      &td, &tz, &ts,  &ty,    st,  &slot};
      EXPECT_EQ(api_->ssm_scan(be_, &a), SY_OK) << error();
      const auto y = read(ty);
      out.insert(out.end(), y.begin(), y.end());
    }
    auto s = read(ts);
    out.insert(out.end(), s.begin(), s.end());
    return out;
  };
  const auto whole = run({0, 7});
  EXPECT_EQ(whole, run({0, 3, 6, 7}));
  EXPECT_EQ(whole, run({0, 1, 2, 3, 4, 5, 6, 7}));
}

// ---- moe_gate ----

TEST_P(HybridOps, MoeGateSoftmaxTopKTiesAndRenormalisation) {
  const int64_t E = 6, T = 4;
  std::vector<float> logits = {
      0.5f, 2.0f, -1.0f, 2.0f, 0.0f, 1.5f,   // tie between experts 1 and 3: 1 first
      1.0f, 1.0f, 1.0f,  1.0f, 1.0f, 1.0f,   // all equal: 0, 1, 2
      -9.f, 3.0f, 7.0f,  -2.f, 6.5f, 0.0f,   // 2, 4, 1
      80.f, 81.f, -80.f, 0.0f, 79.f, 80.5f,  // large values: no overflow
  };
  const std::vector<std::vector<int32_t>> want_ids = {{1, 3, 5}, {0, 1, 2}, {2, 4, 1}, {1, 5, 0}};
  for (int norm = 0; norm < 2; ++norm)
    for (int64_t k : {1, 3}) {
      SCOPED_TRACE("normalize=" + std::to_string(norm) + " k=" + std::to_string(k));
      sy_tensor tl = f32(logits, {E, T});
      sy_tensor ti = make(SY_DTYPE_I32, std::vector<int32_t>(k * T, -1), {k, T});
      sy_tensor tw = f32(std::vector<float>(k * T, NAN), {k, T});
      const float scale = norm ? 1.0f : 2.5f;
      sy_moe_gate_args a{sizeof a, SY_MOE_GATING_SOFTMAX, &tl, &ti, &tw, (uint32_t)norm, scale};
      ASSERT_EQ(api_->moe_gate(be_, &a), SY_OK) << error();
      const auto ids = read<int32_t>(ti);
      const auto w = read(tw);
      for (int64_t t = 0; t < T; ++t) {
        double mx = -1e300, z = 0, wsum = 0;
        for (int64_t e = 0; e < E; ++e) mx = std::max(mx, (double)logits[t * E + e]);
        for (int64_t e = 0; e < E; ++e) z += std::exp(logits[t * E + e] - mx);
        for (int64_t j = 0; j < k; ++j) wsum += std::exp(logits[t * E + want_ids[t][j]] - mx) / z;
        for (int64_t j = 0; j < k; ++j) {
          EXPECT_EQ(ids[t * k + j], want_ids[t][j]) << "token " << t << " slot " << j;
          const double p = std::exp(logits[t * E + want_ids[t][j]] - mx) / z;
          const double want = (norm ? p / std::max(wsum, 6.103515625e-5) : p) * scale;
          EXPECT_NEAR(w[t * k + j], want, 1e-6 * want + 1e-30) << "token " << t << " slot " << j;
        }
      }
    }
}

// ---- moe_matmul and moe_combine ----

std::vector<float> decode(uint32_t dtype, const std::vector<uint8_t>& bytes, int64_t k,
                          int64_t rows) {
  std::vector<float> out(k * rows);
  const int64_t rb = sy::dtype::row_bytes(dtype, k);
  for (int64_t r = 0; r < rows; ++r) sy::dtype::row_to_f32(dtype, &bytes[r * rb], &out[r * k], k);
  return out;
}

TEST_P(HybridOps, MoeMatmulEveryDtypeBroadcastAndPerSlotInputs) {
  const int64_t N = 24, n_expert = 5, k = 2;
  uint64_t seed = 40;
  for (uint32_t dtype : {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16, SY_DTYPE_Q8_0, SY_DTYPE_Q4_0,
                         SY_DTYPE_Q5_1, SY_DTYPE_Q2_K, SY_DTYPE_Q3_K, SY_DTYPE_Q4_K, SY_DTYPE_Q5_K,
                         SY_DTYPE_Q6_K, SY_DTYPE_IQ4_NL, SY_DTYPE_IQ4_XS, SY_DTYPE_MXFP4})
    for (int64_t T : {1, 3, 9})  // decode, small batch (fused kernels), prefill (GEMM path)
      for (int64_t xs : {int64_t(1), k}) {
        const int64_t K = sy::dtype::block_elems(dtype) == 256 ? 256 : 64;
        SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " T=" + std::to_string(T) +
                     " x slots=" + std::to_string(xs));
        Rng rng(seed++);
        const auto wf = rng.vec(K * N * n_expert);
        const int64_t rb = sy::dtype::row_bytes(dtype, K);
        std::vector<uint8_t> wq(rb * N * n_expert);
        for (int64_t r = 0; r < N * n_expert; ++r)
          sy::dtype::row_from_f32(dtype, &wf[r * K], &wq[r * rb], K);
        const auto w = decode(dtype, wq, K, N * n_expert);
        const auto x = rng.vec(K * xs * T);
        std::vector<int32_t> ids(k * T);
        for (int64_t t = 0; t < T; ++t) {
          ids[t * k] = (int32_t)((t * 3) % n_expert);
          ids[t * k + 1] = (int32_t)((t * 3 + 1 + t % 2) % n_expert);
        }
        sy_tensor tx = f32(x, {K, xs, T}), tw = make(dtype, wq, {K, N, n_expert});
        sy_tensor ti = make(SY_DTYPE_I32, ids, {k, T});
        sy_tensor ty = f32(std::vector<float>(N * k * T, NAN), {N, k, T});
        sy_moe_matmul_args a{sizeof a, 0, &tx, &tw, &ti, &ty};
        ASSERT_EQ(api_->moe_matmul(be_, &a), SY_OK) << error();
        std::vector<double> ref(N * k * T), mag(N * k * T), act_q8(N * k * T);
        for (int64_t t = 0; t < T; ++t)
          for (int64_t j = 0; j < k; ++j)
            for (int64_t n = 0; n < N; ++n) {
              const float* xr = &x[(t * xs + (xs == 1 ? 0 : j)) * K];
              const float* wr = &w[(ids[t * k + j] * N + n) * K];
              double s = 0, m = 0;
              for (int64_t c = 0; c < K; ++c)
                s += (double)xr[c] * wr[c], m += std::fabs((double)xr[c] * wr[c]);
              ref[(t * k + j) * N + n] = s;
              mag[(t * k + j) * N + n] = m;
              act_q8[(t * k + j) * N + n] = sy::test::act_q8_bound(xr, wr, K);
            }
        const bool block = sy::dtype::block_elems(dtype) > 1;
        EXPECT_TRUE(close(read(ty), ref, mag, dtype == SY_DTYPE_F32 ? kF32Tol : kQuantTol, 0,
                          block ? &act_q8 : nullptr));
      }
}

TEST_P(HybridOps, MoeCombineSumsWeightedSlots) {
  const int64_t N = 21, k = 3, T = 4;
  Rng rng(50);
  const auto x = rng.vec(N * k * T, -3, 3), w = rng.vec(k * T, 0, 1);
  sy_tensor tx = f32(x, {N, k, T}), tw = f32(w, {k, T}),
            ty = f32(std::vector<float>(N * T, NAN), {N, T});
  ASSERT_EQ(api_->moe_combine(be_, &tx, &tw, &ty), SY_OK) << error();
  std::vector<double> ref(N * T), mag(N * T);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < k; ++j) {
        ref[t * N + n] += (double)w[t * k + j] * x[(t * k + j) * N + n];
        mag[t * N + n] += std::fabs((double)w[t * k + j] * x[(t * k + j) * N + n]);
      }
  EXPECT_TRUE(close(read(ty), ref, mag, kF32Tol));
}

// ---- validation ----

TEST_P(HybridOps, ValidationNamesTheProblem) {
  const int64_t C = 8, K = 4;
  sy_tensor tx = f32(std::vector<float>(C * 2), {C, 2}),
            tw = f32(std::vector<float>(K * C), {K, C});
  sy_tensor ts = f32(std::vector<float>((K - 1) * C * 2), {K - 1, C, 2});
  sy_tensor ty = f32(std::vector<float>(C * 2), {C, 2});
  const uint32_t st[3] = {0, 1, 2};
  int32_t slots[2] = {1, 1};
  sy_ssm_conv_args c{sizeof c, 2, &tx, &tw, nullptr, &ts, &ty, st, slots, 1, 0};
  EXPECT_EQ(api_->ssm_conv(be_, &c), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "ssm_conv: state_slots[0] and state_slots[1] are both 1");
  slots[1] = 2;
  EXPECT_EQ(api_->ssm_conv(be_, &c), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "ssm_conv: state_slots[1]=2 is out of range [0, 2)");
  slots[1] = 0;
  c.y = &tx;
  EXPECT_EQ(api_->ssm_conv(be_, &c), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "ssm_conv: y overlaps x");
  c.y = &ty;
  sy_tensor ts_bad = f32(std::vector<float>(K * C), {K, C, 1});
  c.state = &ts_bad;
  EXPECT_EQ(api_->ssm_conv(be_, &c), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "ssm_conv: state has ne[0]=4, expected 3");

  sy_tensor tl = f32(std::vector<float>(4 * 2), {4, 2});
  sy_tensor ti = make(SY_DTYPE_I32, std::vector<int32_t>(5 * 2), {5, 2});
  sy_tensor tgw = f32(std::vector<float>(5 * 2), {5, 2});
  sy_moe_gate_args g{sizeof g, SY_MOE_GATING_SOFTMAX, &tl, &ti, &tgw, 1, 1.0f};
  EXPECT_EQ(api_->moe_gate(be_, &g), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "moe_gate: ids has ne[0]=5 experts per token, expected 1..4");
  g.gating = 3;
  EXPECT_EQ(api_->moe_gate(be_, &g), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(error(), "moe_gate: gating 3 not supported (1 = softmax, 2 = sigmoid)");

  sy_tensor mx = f32(std::vector<float>(32 * 2), {32, 1, 2});
  sy_tensor mw = f32(std::vector<float>(32 * 8 * 3), {32, 8, 3});
  sy_tensor mi = make(SY_DTYPE_I32, std::vector<int32_t>{0, 2, 3, 1}, {2, 2});
  sy_tensor my = f32(std::vector<float>(8 * 2 * 2), {8, 2, 2});
  sy_moe_matmul_args m{sizeof m, 0, &mx, &mw, &mi, &my};
  EXPECT_EQ(api_->moe_matmul(be_, &m), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "moe_matmul: ids[2]=3 is out of range [0, 3)");
  sy_tensor mif = f32(std::vector<float>(4), {2, 2});
  m.ids = &mif;
  EXPECT_EQ(api_->moe_matmul(be_, &m), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "moe_matmul: ids has dtype 0 (F32), expected I32 (26)");
}

INSTANTIATE_TEST_SUITE_P(Backends, HybridOps, ::testing::Values("cpu_ref", "cpu_onednn"),
                         [](const auto& p) { return p.param; });

}  // namespace
