// Every op of the GPU backends against cpu_ref on the same inputs, the buffer paths (chunked
// uploads, offsets, zeroed allocation) and the ordering of uploads against queued ops. Runs on
// gpu_emu and gpu_emu64 (the kernels on the CPU emulator, warp 32 and 64) everywhere, and on
// cuda / hip where a device exists; without one those skip with "no GPU device"
// (tests/device/run.sh makes that a failure).
//
// Tolerance: |gpu - ref| <= rtol * mag, mag = the natural error scale of the element: the sum of
// the magnitudes of the terms (dot products, conv, combine; the scans and the delta rule run on
// magnitudes), the largest |v| of the cache (attention), |ref| plus the pair norm (rope) or |ref|
// (element-wise ops, norms); rtol = 2e-5 (F32 accumulation against cpu_ref's double).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_fixture.h"
#include "op_compare.h"
#include "rope_ext_args.h"
#include "switchyard/common/dtype.h"
#include "test_rng.h"

namespace {

using sy::test::abs_of;
using sy::test::encode;
using sy::test::Handle;

constexpr double kTol = 2e-5;
// Every weight type of the dtype table, each decoded in the kernels (quant_load.cuh).
const uint32_t kWeightDtypes[] = {SY_DTYPE_F32,  SY_DTYPE_F16,    SY_DTYPE_BF16,   SY_DTYPE_Q8_0,
                                  SY_DTYPE_Q4_0, SY_DTYPE_Q4_1,   SY_DTYPE_Q5_0,   SY_DTYPE_Q5_1,
                                  SY_DTYPE_Q2_K, SY_DTYPE_Q3_K,   SY_DTYPE_Q4_K,   SY_DTYPE_Q5_K,
                                  SY_DTYPE_Q6_K, SY_DTYPE_IQ4_NL, SY_DTYPE_IQ4_XS, SY_DTYPE_MXFP4};
bool block_elems_is_256(uint32_t dt) {
  return sy::dtype::block_elems(dt) == 256;
}
// A row length of whole blocks: `small` for 32-value blocks and float types, 256 otherwise.
int64_t row_len(uint32_t dt, int64_t small) {
  return block_elems_is_256(dt) ? 256 : small;
}

struct Rng : sy::test::XorShiftRng {
  explicit Rng(uint64_t seed) : XorShiftRng(seed, 3) {}
};

// The GPU against cpu_ref: every element within kTol of its magnitude.
::testing::AssertionResult close(const std::vector<float>& got, const std::vector<float>& ref,
                                 const std::vector<double>& mag, double rtol = kTol) {
  return sy::test::close(got, ref, mag, rtol);
}

std::vector<float> decode(uint32_t dtype, const std::vector<uint8_t>& b, int64_t k, int64_t n) {
  std::vector<float> out(k * n);
  const int64_t rb = sy::dtype::row_bytes(dtype, k);
  for (int64_t j = 0; j < n; ++j) sy::dtype::row_to_f32(dtype, &b[j * rb], &out[j * k], k);
  return out;
}

// sum_c |x[r][c] w[j][c]| for y{n, m}.
std::vector<double> dot_mag(const std::vector<float>& x, const std::vector<float>& w, int64_t m,
                            int64_t n, int64_t k) {
  std::vector<double> mag(m * n);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c)
        mag[r * n + j] += std::fabs((double)x[r * k + c] * w[j * k + c]);
  return mag;
}

double softplus(double v) {
  return v > 20 ? v : std::log1p(std::exp(v));
}
double silu(double v) {
  return v / (1 + std::exp(-v));
}

struct ScanInputs {
  int64_t D, S;
  std::vector<float> u, dt, dt_bias, a, b, c, d, z, state;  // empty dt_bias / d / z: absent
};

// Error scales of the scan: its recurrence run on the magnitudes of the terms. Returns the
// state's (indexed like state) and y's.
std::pair<std::vector<double>, std::vector<double>> scan_mag(const ScanInputs& in,
                                                             const std::vector<uint32_t>& start,
                                                             const std::vector<int32_t>& slots) {
  const int64_t D = in.D, S = in.S;
  std::vector<double> hm = abs_of(in.state), ym(in.u.size());
  for (size_t s = 0; s + 1 < start.size(); ++s)
    for (uint32_t t = start[s]; t < start[s + 1]; ++t)
      for (int64_t i = 0; i < D; ++i) {
        const double delta = softplus(in.dt[t * D + i] + (in.dt_bias.empty() ? 0 : in.dt_bias[i]));
        const double u = in.u[t * D + i];
        double m = 0;
        for (int64_t n = 0; n < S; ++n) {
          double& h = hm[(slots[s] * D + i) * S + n];
          h = std::exp(delta * in.a[i * S + n]) * h + std::fabs(delta * in.b[t * S + n] * u);
          m += h * std::fabs(in.c[t * S + n]);
        }
        if (!in.d.empty()) m += std::fabs(in.d[i] * u);
        if (!in.z.empty()) m *= 1.1 * std::fabs(silu(in.z[t * D + i])) + 1e-3;
        ym[t * D + i] = m;
      }
  return {hm, ym};
}

class GpuOps : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "none") GTEST_SKIP() << "no GPU plugin in this build";
    gpu_ = std::make_unique<Handle>(sy::test::gpu_plugin(GetParam()).iface());
    ASSERT_EQ(gpu_->status(), SY_OK) << gpu_->api().last_error(nullptr);
    SY_SKIP_WITHOUT_GPU(*gpu_);
    ref_ = std::make_unique<Handle>(sy::test::LoadedPlugin::backend("cpu_ref").iface());
    ASSERT_EQ(ref_->status(), SY_OK);
  }
  // Runs `op` on both backends; `make` builds its arguments on one of them.
  template <class Op>
  void both(Op&& op) {
    op(*gpu_, true);
    op(*ref_, false);
  }
  std::unique_ptr<Handle> gpu_, ref_;
};

std::string name_of(const ::testing::TestParamInfo<std::string>& p) {
  return p.param;
}

TEST_P(GpuOps, DeviceInfoAndEntry) {
  const sy_device_info d = gpu_->info();
  EXPECT_EQ(d.kind, (uint32_t)SY_DEVICE_GPU);
  EXPECT_EQ(d.available, 1u);
  EXPECT_GT(strnlen(d.name, sizeof d.name), 0u);
  EXPECT_GT(d.memory_total, 0u);
  uint64_t all = 0;
  for (uint32_t t : kWeightDtypes) all |= 1ull << t;
  EXPECT_EQ(d.weight_dtypes, all);
  const sy_plugin_info& info = sy::test::gpu_plugin(GetParam()).info();
  EXPECT_EQ(info.capabilities, (uint64_t)SY_CAP_ASYNC);
  EXPECT_EQ(info.abi_version, (uint32_t)SY_ABI_VERSION);  // hybrid2_ops: the plugin speaks 1.5
  EXPECT_EQ(gpu_->api().buffer_from_host, nullptr);
  const sy_backend_iface& api = gpu_->api();
  for (const void* fn : {(const void*)api.ssm_scan2, (const void*)api.gated_delta_net,
                         (const void*)api.norm, (const void*)api.mul, (const void*)api.unary})
    EXPECT_NE(fn, nullptr);
}

TEST_P(GpuOps, BuffersStartZeroedAndRoundTripInChunks) {
  // 9 MiB + 3 bytes crosses the 4 MiB staging chunks; offsets are arbitrary bytes.
  const uint64_t n = (9u << 20) + 3;
  std::vector<uint8_t> data(n);
  for (uint64_t i = 0; i < n; ++i) data[i] = (uint8_t)(i * 131 + (i >> 13));
  sy_buffer_t b = gpu_->alloc(n + 10);
  std::vector<uint8_t> back(n + 10, 0xEE);
  const auto& api = gpu_->api();
  ASSERT_EQ(api.buffer_read(gpu_->get(), b, 0, back.data(), n + 10), SY_OK) << gpu_->error();
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](uint8_t v) { return v == 0; }));
  ASSERT_EQ(api.buffer_write(gpu_->get(), b, 7, data.data(), n), SY_OK) << gpu_->error();
  ASSERT_EQ(api.synchronize(gpu_->get()), SY_OK);
  ASSERT_EQ(api.buffer_read(gpu_->get(), b, 7, back.data(), n), SY_OK) << gpu_->error();
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin()));
  uint8_t part[5];
  ASSERT_EQ(api.buffer_read(gpu_->get(), b, 7 + 1000, part, 5), SY_OK);
  EXPECT_TRUE(std::equal(part, part + 5, data.begin() + 1000));
  EXPECT_EQ(api.buffer_host_ptr(gpu_->get(), b), nullptr);
  EXPECT_EQ(api.buffer_write(gpu_->get(), b, n, data.data(), 11), SY_ERR_INVALID_ARG);
  EXPECT_EQ(gpu_->error(), "buffer_write: 11 bytes at offset " + std::to_string(n) +
                               " exceed the buffer's size " + std::to_string(n + 10));
}

// Uploads run on the transfer stream: an op must see the upload queued before it, and an upload
// queued after an op must not change what that op reads.
TEST_P(GpuOps, UploadsAndOpsKeepProgramOrder) {
  const int64_t K = 256, N = 512;
  Rng rng(1);
  const auto w = rng.vec(K * N), x1 = rng.vec(K), x2 = rng.vec(K);
  sy_tensor tw = gpu_->make(w, {K, N});
  sy_tensor tx = gpu_->make(x1, {K, 1});
  sy_tensor y1 = gpu_->zeros({N, 1}), y2 = gpu_->zeros({N, 1});
  const auto& api = gpu_->api();
  ASSERT_EQ(api.matmul(gpu_->get(), &tx, &tw, &y1), SY_OK) << gpu_->error();
  ASSERT_EQ(api.buffer_write(gpu_->get(), tx.buffer, 0, x2.data(), K * 4), SY_OK);
  ASSERT_EQ(api.matmul(gpu_->get(), &tx, &tw, &y2), SY_OK) << gpu_->error();
  const auto g1 = gpu_->read(y1), g2 = gpu_->read(y2);
  for (int64_t j = 0; j < N; ++j) {
    double a = 0, b = 0, m1 = 0, m2 = 0;
    for (int64_t c = 0; c < K; ++c) {
      a += (double)x1[c] * w[j * K + c], m1 += std::fabs((double)x1[c] * w[j * K + c]);
      b += (double)x2[c] * w[j * K + c], m2 += std::fabs((double)x2[c] * w[j * K + c]);
    }
    ASSERT_NEAR(g1[j], a, kTol * m1) << j;
    ASSERT_NEAR(g2[j], b, kTol * m2) << j;
  }
}

TEST_P(GpuOps, GetRowsEveryDtype) {
  const int64_t V = 50;
  const std::vector<int32_t> ids = {3, 0, 49, 3, 17};
  for (uint32_t dt : kWeightDtypes) {
    SCOPED_TRACE(sy::dtype::name(dt));
    const int64_t K = row_len(dt, 96);
    Rng rng(dt + 10);
    const auto table = encode(dt, rng.vec(K * V), K, V);
    std::vector<float> out[2];
    both([&](Handle& h, bool g) {
      sy_tensor t = h.make(table, {K, V}, dt), d = h.zeros({K, (int64_t)ids.size()});
      ASSERT_EQ(h.api().get_rows(h.get(), &t, ids.data(), (uint32_t)ids.size(), &d), SY_OK)
          << h.error();
      out[g] = h.read(d);
    });
    EXPECT_EQ(out[1], out[0]);  // a conversion: exact
  }
}

// Decode-sized batches take the GEMV (vector loads when 4 | K and aligned, else scalar), larger
// ones the GEMM (F32 direct; other dtypes through dequantised panels).
TEST_P(GpuOps, MatmulEveryDtypeBatchAndAlignment) {
  uint64_t seed = 100;
  for (uint32_t dt : kWeightDtypes)
    for (int64_t K : block_elems_is_256(dt) ? std::vector<int64_t>{256, 512}
                                            : std::vector<int64_t>{64, 96, 100})
      for (int64_t M : {1, 3, 8, 9, 70})
        for (uint64_t x_off : {0, 4}) {
          if (K % sy::dtype::block_elems(dt)) continue;
          if (x_off && M > 3) continue;
          SCOPED_TRACE(std::string(sy::dtype::name(dt)) + " K=" + std::to_string(K) +
                       " M=" + std::to_string(M) + " x_off=" + std::to_string(x_off));
          const int64_t N = 67;
          Rng rng(seed++);
          const auto wq = encode(dt, rng.vec(K * N), K, N);
          std::vector<float> x = rng.vec(K * M, -2, 2), padded(x_off / 4, 0.0f);
          padded.insert(padded.end(), x.begin(), x.end());
          std::vector<float> out[2];
          both([&](Handle& h, bool g) {
            sy_tensor tx = Handle::tensor(SY_DTYPE_F32, h.upload(padded.data(), padded.size() * 4),
                                          x_off, {K, M});
            sy_tensor tw = h.make(wq, {K, N}, dt), ty = h.zeros({N, M});
            ASSERT_EQ(h.api().matmul(h.get(), &tx, &tw, &ty), SY_OK) << h.error();
            out[g] = h.read(ty);
          });
          EXPECT_TRUE(close(out[1], out[0], dot_mag(x, decode(dt, wq, K, N), M, N, K)));
        }
}

TEST_P(GpuOps, RmsNormInPlaceAndSoftmax) {
  Rng rng(3);
  for (int64_t n : {64, 1000, 4099}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const int64_t rows = 5;
    const auto x = rng.vec(n * rows, -3, 3), w = rng.vec(n);
    std::vector<float> norm[2], soft[2];
    both([&](Handle& h, bool g) {
      sy_tensor tx = h.make(x, {n, rows}), tw = h.make(w, {n}), ts = h.zeros({n, rows});
      ASSERT_EQ(h.api().softmax(h.get(), &tx, &ts), SY_OK) << h.error();
      soft[g] = h.read(ts);
      ASSERT_EQ(h.api().rms_norm(h.get(), &tx, &tw, 1e-5f, &tx), SY_OK) << h.error();
      norm[g] = h.read(tx);
    });
    auto mag = abs_of(norm[0]);
    EXPECT_TRUE(close(norm[1], norm[0], mag));
    mag = abs_of(soft[0]);
    EXPECT_TRUE(close(soft[1], soft[0], mag));
  }
}

// Error scale of a rotation: the pair's norm and the element, times the rotation's gain.
std::vector<double> rope_mag(const std::vector<float>& x, double gain) {
  std::vector<double> mag(x.size(), 0.0);
  for (size_t i = 0; i < x.size(); i += 2)
    mag[i] = mag[i + 1] = gain * (std::hypot((double)x[i], (double)x[i + 1]) + std::fabs(x[i]));
  for (size_t i = 0; i < x.size(); ++i) mag[i] = std::max(mag[i], std::fabs((double)x[i]));
  return mag;
}

TEST_P(GpuOps, RopeBothModesAtLargePositions) {
  const int64_t D = 64, H = 3, T = 4;
  const std::vector<int32_t> pos = {0, 7, 511, 3071};
  Rng rng(4);
  const auto x = rng.vec(D * H * T, -2, 2);
  for (uint32_t mode : {SY_ROPE_NORM, SY_ROPE_NEOX})
    for (uint32_t n_rot : {64u, 32u}) {
      SCOPED_TRACE("mode=" + std::to_string(mode) + " n_rot=" + std::to_string(n_rot));
      std::vector<float> out[2];
      both([&](Handle& h, bool g) {
        sy_tensor tx = h.make(x, {D, H, T});
        ASSERT_EQ(h.api().rope(h.get(), &tx, pos.data(), n_rot, 10000.0f, 0.5f, mode), SY_OK)
            << h.error();
        out[g] = h.read(tx);
      });
      EXPECT_TRUE(close(out[1], out[0], rope_mag(x, 2)));
    }
}

// rope_ext: frequency factors (some small, so angles reach thousands of radians), YaRN and a
// magnitude factor, both modes and a partial rotation; the GPU runs ggml's F32 recipe too, so it
// agrees with cpu_ref to F32 rounding even at the large angles.
TEST_P(GpuOps, RopeExtFactorsAndYarn) {
  const int64_t D = 64, H = 3, T = 4;
  const std::vector<int32_t> pos = {0, 7, 511, 3071};
  Rng rng(14);
  const auto x = rng.vec(D * H * T, -2, 2);
  for (uint32_t mode : {SY_ROPE_NORM, SY_ROPE_NEOX})
    for (uint32_t n_rot : {64u, 32u})
      for (float ext : {0.0f, 1.0f}) {
        SCOPED_TRACE("mode=" + std::to_string(mode) + " n_rot=" + std::to_string(n_rot) +
                     " ext=" + std::to_string(ext));
        std::vector<float> ff = rng.vec(n_rot / 2, 0.5f, 4.0f);
        ff[1] = 0.01f;
        std::vector<float> out[2];
        both([&](Handle& h, bool g) {
          sy_tensor tx = h.make(x, {D, H, T}), tf = h.make(ff, {(int64_t)n_rot / 2});
          const auto a = sy::test::rope_ext_args(&tx, pos.data(), &tf, n_rot, mode, ext);
          ASSERT_EQ(h.api().rope_ext(h.get(), &a), SY_OK) << h.error();
          out[g] = h.read(tx);
        });
        EXPECT_TRUE(close(out[1], out[0], rope_mag(x, 3)));
      }
}

TEST_P(GpuOps, BiasScaleBothOrdersInPlace) {
  Rng rng(15);
  const int64_t n = 333, rows = 7;
  const auto x = rng.vec(n * rows, -4, 4), bias = rng.vec(n, -1, 1);
  for (uint32_t order : {SY_SCALE_THEN_BIAS, SY_BIAS_THEN_SCALE})
    for (bool with_bias : {true, false}) {
      std::vector<float> out[2];
      both([&](Handle& h, bool g) {
        sy_tensor tx = h.make(x, {n, rows}), tb = h.make(bias, {n});
        const sy_bias_scale_args a{
            sizeof(sy_bias_scale_args), order, &tx, with_bias ? &tb : nullptr, &tx, 0.625f, 0};
        ASSERT_EQ(h.api().bias_scale(h.get(), &a), SY_OK) << h.error();
        out[g] = h.read(tx);
      });
      EXPECT_TRUE(close(out[1], out[0], abs_of(out[0])))
          << "order " << order << " bias " << with_bias;
    }
}

TEST_P(GpuOps, AddAndSwigluAliasingTheirOutput) {
  Rng rng(5);
  const int64_t n = 70001;
  const auto a = rng.vec(n, -8, 8), b = rng.vec(n, -3, 3);
  std::vector<float> sum[2], act[2];
  both([&](Handle& h, bool g) {
    sy_tensor ta = h.make(a, {n}), tb = h.make(b, {n});
    ASSERT_EQ(h.api().swiglu(h.get(), &ta, &tb, &tb), SY_OK) << h.error();  // y = up
    act[g] = h.read(tb);
    ASSERT_EQ(h.api().add(h.get(), &ta, &tb, &ta), SY_OK) << h.error();  // y = a
    sum[g] = h.read(ta);
  });
  EXPECT_TRUE(close(act[1], act[0], abs_of(act[0])));
  std::vector<double> mag(n);
  for (int64_t i = 0; i < n; ++i) mag[i] = std::fabs(a[i]) + std::fabs(act[0][i]);
  EXPECT_TRUE(close(sum[1], sum[0], mag));
}

// Mixed decode and prefill sequences, grouped-query heads, scattered non-contiguous blocks,
// head sizes that are and are not whole warps.
// With an F32 and an F16 cache (ABI 1.3): kv_store rounds to the same F16 bits as cpu_ref.
TEST_P(GpuOps, KvStoreAndPagedAttentionDecodeAndPrefill) {
  struct Case {
    int64_t D, H, HK, bs;
  };
  EXPECT_EQ(gpu_->info().kv_dtypes, (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16));
  for (const uint32_t kv : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_F16})
    for (const Case& c : {Case{64, 4, 2, 16}, Case{80, 6, 6, 5}, Case{128, 8, 1, 16}}) {
      SCOPED_TRACE(std::string(sy::dtype::name(kv)) + " cache, D=" + std::to_string(c.D) +
                   " H=" + std::to_string(c.H) + " HK=" + std::to_string(c.HK) +
                   " bs=" + std::to_string(c.bs));
      // Sequence 0: 1 new token at position 40 (decode); 1: a 9-token prompt chunk at 3..11;
      // 2: a fresh 6-token prompt; 3: decode at position 0.
      const std::vector<int32_t> first = {40, 3, 0, 0}, count = {1, 9, 6, 1};
      const int64_t n_blocks = 64, max_blocks = 12, W = c.D * c.HK;
      std::vector<int32_t> tables(4 * max_blocks), pos, slots;
      std::vector<uint32_t> start = {0};
      for (int s = 0; s < 4; ++s) {
        for (int b = 0; b < max_blocks; ++b)
          tables[s * max_blocks + b] = (b * 17 + s * 5 + 3) % n_blocks;
        for (int t = 0; t < count[s]; ++t) {
          const int32_t p = first[s] + t;
          pos.push_back(p);
          slots.push_back(tables[s * max_blocks + p / c.bs] * (int32_t)c.bs + p % (int32_t)c.bs);
        }
        start.push_back((uint32_t)pos.size());
      }
      const int64_t T = (int64_t)pos.size();
      Rng rng(c.D + c.H);
      const auto kc = rng.vec(W * c.bs * n_blocks, -2, 2), vc = rng.vec(W * c.bs * n_blocks, -2, 2);
      const auto k = rng.vec(W * T, -2, 2), v = rng.vec(W * T, -2, 2),
                 q = rng.vec(c.D * c.H * T, -2, 2);
      std::vector<uint16_t> kc16(kc.size()), vc16(vc.size());
      for (size_t i = 0; i < kc.size(); ++i)
        kc16[i] = sy::dtype::f32_to_f16(kc[i]), vc16[i] = sy::dtype::f32_to_f16(vc[i]);
      std::vector<float> out[2], kcache[2];
      std::vector<uint16_t> kcache16[2];
      both([&](Handle& h, bool g) {
        const bool f16 = kv == SY_DTYPE_F16;
        sy_tensor tkc =
            f16 ? h.make(kc16, {W, c.bs * n_blocks}, kv) : h.make(kc, {W, c.bs * n_blocks});
        sy_tensor tvc =
            f16 ? h.make(vc16, {W, c.bs * n_blocks}, kv) : h.make(vc, {W, c.bs * n_blocks});
        sy_tensor tk = h.make(k, {W, T}), tv = h.make(v, {W, T}), tq = h.make(q, {c.D, c.H, T});
        sy_tensor to = h.zeros({c.D, c.H, T});
        const sy_kv_store_args st{sizeof(sy_kv_store_args), &tk, &tv, &tkc, &tvc, slots.data()};
        ASSERT_EQ(h.api().kv_store(h.get(), &st), SY_OK) << h.error();
        sy_attention_args a{};
        a.struct_size = sizeof a;
        a.q = &tq, a.k_cache = &tkc, a.v_cache = &tvc, a.out = &to;
        a.n_kv_head = (uint32_t)c.HK;
        a.n_seqs = 4;
        a.seq_token_start = start.data();
        a.token_pos = pos.data();
        a.block_tables = tables.data();
        a.max_blocks_per_seq = (uint32_t)max_blocks;
        a.block_size = (uint32_t)c.bs;
        a.scale = 1.0f / std::sqrt((float)c.D);
        ASSERT_EQ(h.api().attention(h.get(), &a), SY_OK) << h.error();
        out[g] = h.read(to);
        if (f16)
          kcache16[g] = h.read<uint16_t>(tkc);
        else
          kcache[g] = h.read(tkc);
      });
      EXPECT_EQ(kcache[1], kcache[0]);
      EXPECT_EQ(kcache16[1], kcache16[0]);
      EXPECT_TRUE(close(out[1], out[0], std::vector<double>(out[0].size(), 2.0)));  // max |v| = 2
    }
}

TEST_P(GpuOps, AttentionRefusesHeadsAbove256) {
  const int64_t D = 264;
  sy_tensor q = gpu_->zeros({D, 1, 1}), o = gpu_->zeros({D, 1, 1}), kc = gpu_->zeros({D, 16});
  sy_tensor vc = gpu_->zeros({D, 16});
  const uint32_t start[2] = {0, 1};
  const int32_t pos = 0, table = 0;
  sy_attention_args a{};
  a.struct_size = sizeof a;
  a.q = &q, a.k_cache = &kc, a.v_cache = &vc, a.out = &o;
  a.n_kv_head = 1, a.n_seqs = 1, a.seq_token_start = start, a.token_pos = &pos;
  a.block_tables = &table, a.max_blocks_per_seq = 1, a.block_size = 16, a.scale = 1.0f;
  EXPECT_EQ(gpu_->api().attention(gpu_->get(), &a), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "attention: head_dim 264 above 256 not supported");
}

TEST_P(GpuOps, DeviceIndexBeyondTheVisibleDevicesIsRefused) {
  const sy_param p = {"device", "1023"};
  Handle h(gpu_->api(), {p});
  EXPECT_EQ(h.status(), SY_ERR_INVALID_ARG);
  const std::string e = gpu_->api().last_error(nullptr);
  EXPECT_EQ(e.rfind("create: param device=1023 but only ", 0), 0u) << e;
  EXPECT_NE(e.find(" device(s) are visible"), std::string::npos) << e;
}

// The kernels keep per-thread state in registers of fixed size; beyond it the op says so.
TEST_P(GpuOps, HybridLimitsAreNamed) {
  const uint32_t start[2] = {0, 1};
  const int32_t slot = 0;
  sy_tensor x = gpu_->zeros({4, 1}), w = gpu_->zeros({17, 4}), st = gpu_->zeros({16, 4, 1});
  sy_tensor y = gpu_->zeros({4, 1});
  sy_ssm_conv_args c{sizeof c, 1, &x, &w, nullptr, &st, &y, start, &slot, 1, 0};
  EXPECT_EQ(gpu_->api().ssm_conv(gpu_->get(), &c), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "ssm_conv: d_conv 17 above 16 not supported");
  sy_tensor a = gpu_->zeros({300, 4}), bc = gpu_->zeros({300, 1}), h = gpu_->zeros({300, 4, 1});
  sy_ssm_scan_args s{};
  s.struct_size = sizeof s;
  s.n_seqs = 1;
  s.u = &x, s.dt = &x, s.a = &a, s.b = &bc, s.c = &bc, s.state = &h, s.y = &y;
  s.seq_token_start = start;
  s.state_slots = &slot;
  EXPECT_EQ(gpu_->api().ssm_scan(gpu_->get(), &s), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "ssm_scan: d_state 300 above 256 not supported");
  sy_tensor logits = gpu_->zeros({1025, 1}), ids = gpu_->zeros({1, 1}, SY_DTYPE_I32);
  sy_tensor wt = gpu_->zeros({1, 1});
  sy_moe_gate_args g{sizeof g, SY_MOE_GATING_SOFTMAX, &logits, &ids, &wt, 0, 1.0f, nullptr};
  EXPECT_EQ(gpu_->api().moe_gate(gpu_->get(), &g), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "moe_gate: n_expert 1025 above 1024 not supported");
}

// ---- 1.1 hybrid ops ----

TEST_P(GpuOps, SsmConvAndScanOverMixedChunks) {
  // Sequences of 5, 0 and 1 tokens (prefill chunk, empty, decode) in slots out of order.
  const std::vector<uint32_t> start = {0, 5, 5, 6};
  const std::vector<int32_t> slots = {2, 0, 3};
  const int64_t T = 6, n_slots = 4;
  for (int64_t C : {19, 300})
    for (int64_t K : {1, 4}) {
      SCOPED_TRACE("conv C=" + std::to_string(C) + " K=" + std::to_string(K));
      Rng rng(C + K);
      const auto x = rng.vec(C * T, -2, 2), w = rng.vec(K * C), bias = rng.vec(C);
      const auto state = rng.vec(std::max<int64_t>(K - 1, 1) * C * n_slots, -2, 2);
      std::vector<float> y[2], st[2];
      both([&](Handle& h, bool g) {
        sy_tensor tx = h.make(x, {C, T}), tw = h.make(w, {K, C}), tb = h.make(bias, {C});
        sy_tensor ts = h.make(state, {K - 1, C, n_slots}), ty = h.zeros({C, T});
        sy_ssm_conv_args a{sizeof a, 3, &tx, &tw, &tb, &ts, &ty, start.data(), slots.data(), 1, 0};
        ASSERT_EQ(h.api().ssm_conv(h.get(), &a), SY_OK) << h.error();
        y[g] = h.read(ty);
        if (K > 1) st[g] = h.read(ts);
      });
      std::vector<double> mag(C * T);
      for (size_t i = 0; i < mag.size(); ++i) mag[i] = 2.2 * (std::fabs(bias[i % C]) + 2.0 * K);
      EXPECT_TRUE(close(y[1], y[0], mag));
      EXPECT_EQ(st[1], st[0]);  // copies of inputs: exact
    }
  for (int64_t S : {16, 100})
    for (bool optional : {false, true}) {
      SCOPED_TRACE("scan S=" + std::to_string(S) + " optional=" + std::to_string(optional));
      Rng rng(S + optional);
      ScanInputs in;
      in.D = 37, in.S = S;
      const int64_t D = in.D;
      in.u = rng.vec(D * T), in.dt = rng.vec(D * T, -3, 1), in.a = rng.vec(S * D, 0, 2);
      for (float& v : in.a) v = -std::exp(v);
      in.b = rng.vec(S * T), in.c = rng.vec(S * T), in.state = rng.vec(S * D * n_slots);
      if (optional) in.dt_bias = rng.vec(D), in.d = rng.vec(D), in.z = rng.vec(D * T, -3, 3);
      std::vector<float> y[2], st[2];
      both([&](Handle& h, bool g) {
        sy_tensor tu = h.make(in.u, {D, T}), tdt = h.make(in.dt, {D, T}), ta = h.make(in.a, {S, D});
        sy_tensor tb = h.make(in.b, {S, T}), tc = h.make(in.c, {S, T});
        sy_tensor ts = h.make(in.state, {S, D, n_slots}), ty = h.zeros({D, T});
        sy_tensor tdtb, td, tz;
        sy_ssm_scan_args args{};
        args.struct_size = sizeof args;
        args.n_seqs = 3;
        args.u = &tu, args.dt = &tdt, args.a = &ta, args.b = &tb, args.c = &tc, args.state = &ts;
        args.y = &ty;
        if (optional) {
          tdtb = h.make(in.dt_bias, {D}), td = h.make(in.d, {D}), tz = h.make(in.z, {D, T});
          args.dt_bias = &tdtb, args.d = &td, args.z = &tz;
        }
        args.seq_token_start = start.data();
        args.state_slots = slots.data();
        ASSERT_EQ(h.api().ssm_scan(h.get(), &args), SY_OK) << h.error();
        y[g] = h.read(ty);
        st[g] = h.read(ts);
      });
      const auto [hmag, ymag] = scan_mag(in, start, slots);
      EXPECT_TRUE(close(st[1], st[0], hmag));
      EXPECT_TRUE(close(y[1], y[0], ymag));
    }
}

TEST_P(GpuOps, MoeGateMatmulAndCombine) {
  const int64_t E = 6, N = 40, k = 2;
  uint64_t seed = 200;
  for (int64_t T : {1, 3, 30})  // GEMV pairs, GEMV pairs, the routed GEMM
    for (uint32_t dt : kWeightDtypes) {
      SCOPED_TRACE(std::string(sy::dtype::name(dt)) + " T=" + std::to_string(T));
      const int64_t K = row_len(dt, 64);
      Rng rng(seed++);
      auto logits = rng.vec(E * T, -3, 3);
      logits[1] = logits[3] = 5.0f;  // a tie: the lower id first
      const auto x = rng.vec(K * T);
      const auto wq = encode(dt, rng.vec(K * N * E), K, N * E);
      std::vector<int32_t> ids[2];
      std::vector<float> wts[2], ys[2], comb[2];
      both([&](Handle& h, bool g) {
        sy_tensor tl = h.make(logits, {E, T}), ti = h.zeros({k, T}, SY_DTYPE_I32);
        sy_tensor tw = h.zeros({k, T});
        sy_moe_gate_args ga{sizeof ga, SY_MOE_GATING_SOFTMAX, &tl, &ti, &tw, 1, 1.5f, nullptr};
        ASSERT_EQ(h.api().moe_gate(h.get(), &ga), SY_OK) << h.error();
        sy_tensor tx = h.make(x, {K, 1, T}), tm = h.make(wq, {K, N, E}, dt),
                  ty = h.zeros({N, k, T});
        sy_moe_matmul_args ma{sizeof ma, 0, &tx, &tm, &ti, &ty, 0, nullptr, nullptr};
        ASSERT_EQ(h.api().moe_matmul(h.get(), &ma), SY_OK) << h.error();
        sy_tensor tc = h.zeros({N, T});
        ASSERT_EQ(h.api().moe_combine(h.get(), &ty, &tw, &tc), SY_OK) << h.error();
        ids[g] = h.read<int32_t>(ti);
        wts[g] = h.read(tw);
        ys[g] = h.read(ty);
        comb[g] = h.read(tc);
      });
      ASSERT_EQ(ids[1], ids[0]);
      EXPECT_TRUE(close(wts[1], wts[0], abs_of(wts[0])));
      std::vector<double> mag(N * k * T);
      const auto w = decode(dt, wq, K, N * E);
      for (int64_t p = 0; p < k * T; ++p)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t c = 0; c < K; ++c)
            mag[p * N + j] +=
                std::fabs((double)x[(p / k) * K + c] * w[(ids[0][p] * N + j) * K + c]);
      EXPECT_TRUE(close(ys[1], ys[0], mag));
      std::vector<double> cmag(N * T);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t s = 0; s < k; ++s)
            cmag[t * N + j] += std::fabs(wts[0][t * k + s]) * mag[(t * k + s) * N + j];
      EXPECT_TRUE(close(comb[1], comb[0], cmag));
    }
}

// CPU backends refuse out-of-range expert ids; a device backend cannot read them on the host,
// so it leaves those rows zero rather than reading outside the weights.
TEST_P(GpuOps, MoeMatmulLeavesRowsOfBadIdsZero) {
  const int64_t K = 32, N = 8, E = 2;
  for (int64_t T : {1, 20}) {
    std::vector<int32_t> ids(T, 1);
    ids[0] = 7;
    Rng rng(9);
    sy_tensor tx = gpu_->make(rng.vec(K * T), {K, 1, T}),
              tw = gpu_->make(rng.vec(K * N * E), {K, N, E});
    sy_tensor ti = gpu_->make(ids, {1, T}, SY_DTYPE_I32),
              ty = gpu_->make(std::vector<float>(N * T, 9.0f), {N, 1, T});
    sy_moe_matmul_args a{sizeof a, 0, &tx, &tw, &ti, &ty, 0, nullptr, nullptr};
    ASSERT_EQ(gpu_->api().moe_matmul(gpu_->get(), &a), SY_OK) << gpu_->error();
    const auto y = gpu_->read(ty);
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(y[j], 0.0f) << "T=" << T << " j=" << j;
    if (T > 1) {
      EXPECT_NE(y[N], 0.0f);
    }
  }
}

// ---- 1.5 ops ----

// The token columns `cols` of v{width, T}, in that order.
std::vector<float> gather(const std::vector<float>& v, int64_t width,
                          const std::vector<int64_t>& cols) {
  std::vector<float> out;
  for (int64_t t : cols) out.insert(out.end(), v.begin() + t * width, v.begin() + (t + 1) * width);
  return out;
}

// Batches of the recurrent tests: sequences of 6, 0, 1 and 9 tokens in slots out of order.
const std::vector<uint32_t> kRecStart = {0, 6, 6, 7, 16};
const std::vector<int32_t> kRecSlots = {3, 0, 4, 1};
constexpr int64_t kRecTokens = 16, kRecSlotCount = 5;

struct Scan2Inputs {
  int64_t D, H, G, S;                                   // d_inner, heads, groups, d_state
  std::vector<float> xbc, dt, dt_bias, a, d, z, state;  // empty dt_bias / d / z: absent
  int64_t width() const { return D + 2 * G * S; }
};

Scan2Inputs scan2_inputs(int64_t S, int64_t P, int64_t H, int64_t G, bool optional, uint64_t seed) {
  Rng rng(seed);
  Scan2Inputs in;
  in.D = P * H, in.H = H, in.G = G, in.S = S;
  const int64_t T = kRecTokens;
  in.xbc = rng.vec(in.width() * T), in.dt = rng.vec(H * T, -3, 1), in.a = rng.vec(H, 0, 2);
  for (float& v : in.a) v = -std::exp(v);
  in.state = rng.vec(S * in.D * kRecSlotCount);
  if (optional) in.dt_bias = rng.vec(H), in.d = rng.vec(H), in.z = rng.vec(in.D * T, -3, 3);
  return in;
}

// ssm_scan2 on h over the input tokens `cols` batched by start/slots, state in/out in `st`.
std::vector<float> run_scan2(Handle& h, const Scan2Inputs& in, const std::vector<int64_t>& cols,
                             const std::vector<uint32_t>& start, const std::vector<int32_t>& slots,
                             const sy_tensor& st) {
  const int64_t T = (int64_t)cols.size();
  sy_tensor txbc = h.make(gather(in.xbc, in.width(), cols), {in.width(), T});
  sy_tensor tdt = h.make(gather(in.dt, in.H, cols), {in.H, T}), ta = h.make(in.a, {in.H});
  sy_tensor ty = h.zeros({in.D, T}), tdtb, td, tz;
  sy_ssm_scan2_args a{};
  a.struct_size = sizeof a;
  a.n_seqs = (uint32_t)slots.size();
  a.xbc = &txbc, a.dt = &tdt, a.a = &ta, a.state = &st, a.y = &ty;
  if (!in.dt_bias.empty()) tdtb = h.make(in.dt_bias, {in.H}), a.dt_bias = &tdtb;
  if (!in.d.empty()) td = h.make(in.d, {in.H}), a.d = &td;
  if (!in.z.empty()) tz = h.make(gather(in.z, in.D, cols), {in.D, T}), a.z = &tz;
  a.seq_token_start = start.data();
  a.state_slots = slots.data();
  EXPECT_EQ(h.api().ssm_scan2(h.get(), &a), SY_OK) << h.error();
  return h.read(ty);
}

// Error scales of Mamba-2's scan: the recurrence on the magnitudes of its terms (state, y).
std::pair<std::vector<double>, std::vector<double>> scan2_mag(const Scan2Inputs& in) {
  const int64_t D = in.D, H = in.H, S = in.S, P = D / H, W = in.width();
  std::vector<double> hm = abs_of(in.state), ym(D * kRecTokens);
  for (size_t s = 0; s < kRecSlots.size(); ++s)
    for (uint32_t t = kRecStart[s]; t < kRecStart[s + 1]; ++t) {
      const float* x = &in.xbc[t * W];
      for (int64_t h = 0; h < H; ++h) {
        const int64_t g = h / (H / in.G);
        const double delta = softplus(in.dt[t * H + h] + (in.dt_bias.empty() ? 0 : in.dt_bias[h]));
        const double decay = std::exp(delta * in.a[h]);
        for (int64_t i = h * P; i < (h + 1) * P; ++i) {
          double m = 0;
          for (int64_t n = 0; n < S; ++n) {
            double& sn = hm[(kRecSlots[s] * D + i) * S + n];
            sn = sn * decay + std::fabs(x[D + g * S + n] * x[i] * delta);
            m += sn * std::fabs(x[D + (in.G + g) * S + n]);
          }
          if (!in.d.empty()) m += std::fabs(in.d[h] * x[i]);
          if (!in.z.empty()) m *= 1.1 * std::fabs(silu(in.z[t * D + i])) + 1e-3;
          ym[t * D + i] = m;
        }
      }
    }
  return {hm, ym};
}

std::vector<int64_t> iota_cols(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// d_state 1 .. 128, head_dim 3 and 64, groups dividing the heads, with and without the optional
// inputs; sequences of 6, 0, 1 and 9 tokens.
TEST_P(GpuOps, SsmScan2MatchesCpuRef) {
  struct Case {
    int64_t S, P, H, G;
  };
  uint64_t seed = 300;
  for (const Case& c : {Case{1, 3, 4, 2}, Case{5, 3, 6, 3}, Case{17, 64, 2, 1}, Case{128, 3, 4, 4},
                        Case{128, 64, 2, 2}})
    for (bool optional : {false, true}) {
      SCOPED_TRACE("d_state=" + std::to_string(c.S) + " head_dim=" + std::to_string(c.P) +
                   " heads=" + std::to_string(c.H) + " groups=" + std::to_string(c.G) +
                   " optional=" + std::to_string(optional));
      const Scan2Inputs in = scan2_inputs(c.S, c.P, c.H, c.G, optional, seed++);
      std::vector<float> y[2], st[2];
      both([&](Handle& h, bool g) {
        sy_tensor ts = h.make(in.state, {in.S, in.D, kRecSlotCount});
        y[g] = run_scan2(h, in, iota_cols(kRecTokens), kRecStart, kRecSlots, ts);
        st[g] = h.read(ts);
      });
      const auto [hmag, ymag] = scan2_mag(in);
      EXPECT_TRUE(close(st[1], st[0], hmag));
      EXPECT_TRUE(close(y[1], y[0], ymag));
    }
}

struct GdnInputs {
  int64_t S, HK, HV;
  uint32_t head_map;
  std::vector<float> qkv, alpha, beta, dt_bias, a, state;
  int64_t width() const { return (2 * HK + HV) * S; }
};

GdnInputs gdn_inputs(int64_t S, int64_t HK, int64_t HV, uint32_t head_map, uint64_t seed) {
  Rng rng(seed);
  GdnInputs in;
  in.S = S, in.HK = HK, in.HV = HV, in.head_map = head_map;
  const int64_t T = kRecTokens;
  in.qkv = rng.vec(in.width() * T), in.alpha = rng.vec(HV * T, -3, 1);
  in.beta = rng.vec(HV * T, -3, 3), in.dt_bias = rng.vec(HV), in.a = rng.vec(HV, 0, 2);
  for (float& v : in.a) v = -std::exp(v);
  in.state = rng.vec(S * S * HV * kRecSlotCount, -0.5f, 0.5f);
  return in;
}

constexpr float kGdnEps = 1e-6f;

std::vector<float> run_gdn(Handle& h, const GdnInputs& in, const std::vector<int64_t>& cols,
                           const std::vector<uint32_t>& start, const std::vector<int32_t>& slots,
                           const sy_tensor& st) {
  const int64_t T = (int64_t)cols.size();
  sy_tensor tqkv = h.make(gather(in.qkv, in.width(), cols), {in.width(), T});
  sy_tensor tal = h.make(gather(in.alpha, in.HV, cols), {in.HV, T});
  sy_tensor tbe = h.make(gather(in.beta, in.HV, cols), {in.HV, T});
  sy_tensor tdtb = h.make(in.dt_bias, {in.HV}), ta = h.make(in.a, {in.HV});
  sy_tensor ty = h.zeros({in.S, in.HV, T});
  sy_gated_delta_net_args a{};
  a.struct_size = sizeof a;
  a.n_seqs = (uint32_t)slots.size();
  a.qkv = &tqkv, a.alpha = &tal, a.beta = &tbe, a.dt_bias = &tdtb, a.a = &ta, a.state = &st;
  a.y = &ty;
  a.seq_token_start = start.data();
  a.state_slots = slots.data();
  a.head_map = in.head_map;
  a.eps = kGdnEps;
  EXPECT_EQ(h.api().gated_delta_net(h.get(), &a), SY_OK) << h.error();
  return h.read(ty);
}

// Error scales of the delta rule: |M| decays and gains |kn| |u|, with |u| bounded by
// b (|v| + sum_i |M[i, c]| |kn[i]|); y by sum_i |M[i, c]| |qn[i]| / sqrt(S).
std::pair<std::vector<double>, std::vector<double>> gdn_mag(const GdnInputs& in) {
  const int64_t S = in.S, HK = in.HK, HV = in.HV, W = in.width();
  std::vector<double> mm = abs_of(in.state), ym(S * HV * kRecTokens), qn(S), kn(S);
  auto l2abs = [&](const float* v, std::vector<double>& out) {
    double ss = 0;
    for (int64_t i = 0; i < S; ++i) ss += (double)v[i] * v[i];
    for (int64_t i = 0; i < S; ++i) out[i] = std::fabs(v[i]) / std::max(std::sqrt(ss), 1e-6);
  };
  for (size_t s = 0; s < kRecSlots.size(); ++s)
    for (uint32_t t = kRecStart[s]; t < kRecStart[s + 1]; ++t)
      for (int64_t j = 0; j < HV; ++j) {
        const int64_t m = in.head_map == SY_GDN_HEADS_MODULO ? j % HK : j / (HV / HK);
        const float* col = &in.qkv[t * W];
        l2abs(col + m * S, qn);
        l2abs(col + (HK + m) * S, kn);
        const double decay = std::exp(softplus(in.alpha[t * HV + j] + in.dt_bias[j]) * in.a[j]);
        const double b = 1 / (1 + std::exp(-(double)in.beta[t * HV + j]));
        double* M = &mm[((int64_t)kRecSlots[s] * HV + j) * S * S];
        for (int64_t c = 0; c < S; ++c) {
          double dot = 0;
          for (int64_t i = 0; i < S; ++i) dot += (M[c * S + i] *= decay) * kn[i];
          const double u = b * (std::fabs(col[(2 * HK + j) * S + c]) + dot);
          double o = 0;
          for (int64_t i = 0; i < S; ++i) o += (M[c * S + i] += kn[i] * u) * qn[i];
          ym[(t * HV + j) * S + c] = o / std::sqrt((double)S);
        }
      }
  return {mm, ym};
}

// Head sizes 1 .. 128 with fewer key heads than value heads, both head maps.
TEST_P(GpuOps, GatedDeltaNetMatchesCpuRef) {
  struct Case {
    int64_t S, HK, HV;
  };
  uint64_t seed = 400;
  for (const Case& c : {Case{1, 2, 4}, Case{7, 2, 6}, Case{33, 1, 3}, Case{128, 2, 4}})
    for (uint32_t map : {SY_GDN_HEADS_MODULO, SY_GDN_HEADS_BLOCKED}) {
      SCOPED_TRACE("S=" + std::to_string(c.S) + " n_k_head=" + std::to_string(c.HK) +
                   " n_v_head=" + std::to_string(c.HV) + " head_map=" + std::to_string(map));
      const GdnInputs in = gdn_inputs(c.S, c.HK, c.HV, map, seed++);
      std::vector<float> y[2], st[2];
      both([&](Handle& h, bool g) {
        sy_tensor ts = h.make(in.state, {in.S, in.S, in.HV, kRecSlotCount});
        y[g] = run_gdn(h, in, iota_cols(kRecTokens), kRecStart, kRecSlots, ts);
        st[g] = h.read(ts);
      });
      const auto [mmag, ymag] = gdn_mag(in);
      EXPECT_TRUE(close(st[1], st[0], mmag));
      EXPECT_TRUE(close(y[1], y[0], ymag));
    }
}

// The state is F32 in registers and in memory alike: the sequences of kRecStart run in two calls
// (each cut at its own point) give one call's results bit for bit.
TEST_P(GpuOps, RecurrencesCarryStateAcrossCalls) {
  std::vector<int64_t> first, second;
  std::vector<uint32_t> start1 = {0}, start2 = {0};
  for (size_t s = 0; s + 1 < kRecStart.size(); ++s) {
    const uint32_t b = kRecStart[s], e = kRecStart[s + 1], cut = b + (e - b) / 3;
    for (uint32_t t = b; t < e; ++t) (t < cut ? first : second).push_back(t);
    start1.push_back((uint32_t)first.size());
    start2.push_back((uint32_t)second.size());
  }
  // y of the two calls in the one call's token order.
  auto merge = [&](const std::vector<float>& y1, const std::vector<float>& y2, int64_t width) {
    std::vector<float> y(width * kRecTokens);
    for (size_t i = 0; i < first.size(); ++i)
      std::copy_n(&y1[i * width], width, &y[first[i] * width]);
    for (size_t i = 0; i < second.size(); ++i)
      std::copy_n(&y2[i * width], width, &y[second[i] * width]);
    return y;
  };
  Handle& h = *gpu_;
  {
    const Scan2Inputs in = scan2_inputs(16, 8, 4, 2, true, 500);
    sy_tensor one = h.make(in.state, {in.S, in.D, kRecSlotCount});
    sy_tensor two = h.make(in.state, {in.S, in.D, kRecSlotCount});
    const auto y = run_scan2(h, in, iota_cols(kRecTokens), kRecStart, kRecSlots, one);
    const auto y1 = run_scan2(h, in, first, start1, kRecSlots, two);
    const auto y2 = run_scan2(h, in, second, start2, kRecSlots, two);
    EXPECT_EQ(merge(y1, y2, in.D), y) << "ssm_scan2";
    EXPECT_EQ(h.read(two), h.read(one)) << "ssm_scan2";
  }
  for (uint32_t map : {SY_GDN_HEADS_MODULO, SY_GDN_HEADS_BLOCKED}) {
    const GdnInputs in = gdn_inputs(33, 2, 4, map, 501);
    sy_tensor one = h.make(in.state, {in.S, in.S, in.HV, kRecSlotCount});
    sy_tensor two = h.make(in.state, {in.S, in.S, in.HV, kRecSlotCount});
    const auto y = run_gdn(h, in, iota_cols(kRecTokens), kRecStart, kRecSlots, one);
    const auto y1 = run_gdn(h, in, first, start1, kRecSlots, two);
    const auto y2 = run_gdn(h, in, second, start2, kRecSlots, two);
    EXPECT_EQ(merge(y1, y2, in.S * in.HV), y) << "gated_delta_net, head_map " << map;
    EXPECT_EQ(h.read(two), h.read(one)) << "gated_delta_net, head_map " << map;
  }
}

// RMS and L2, no weight, one weight row, and grouped weights (row r takes column r mod groups),
// in place and not.
TEST_P(GpuOps, NormRmsAndL2WithGroupedWeights) {
  Rng rng(16);
  const int64_t rows = 6;
  for (int64_t n : {1, 37, 1000, 4099})
    for (uint32_t kind : {SY_NORM_RMS, SY_NORM_L2})
      for (int64_t groups : {0, 1, 3}) {  // 0: no weight
        SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind) +
                     " groups=" + std::to_string(groups));
        const auto x = rng.vec(n * rows, -3, 3), w = rng.vec(n * std::max<int64_t>(groups, 1));
        const bool in_place = n % 2 == 1;
        std::vector<float> out[2];
        both([&](Handle& h, bool g) {
          sy_tensor tx = h.make(x, {n, rows}), tw = h.make(w, {n, std::max<int64_t>(groups, 1)});
          sy_tensor ty = in_place ? tx : h.zeros({n, rows});
          const sy_norm_args a{sizeof a, kind, &tx, groups ? &tw : nullptr, &ty, 1e-5f, 0};
          ASSERT_EQ(h.api().norm(h.get(), &a), SY_OK) << h.error();
          out[g] = h.read(ty);
        });
        EXPECT_TRUE(close(out[1], out[0], abs_of(out[0])));
      }
}

// b of a's shape or one value per row; y aliasing a or b. One F32 product: exact.
TEST_P(GpuOps, MulBroadcastsPerRowAndAliases) {
  Rng rng(17);
  const int64_t rows = 9;
  for (int64_t n : {1, 333})
    for (bool per_row : {false, true})
      for (int alias : {0, 1, 2}) {                    // y is a fresh tensor, a, or b
        if (alias == 2 && per_row && n > 1) continue;  // y has a's shape
        SCOPED_TRACE("n=" + std::to_string(n) + " per_row=" + std::to_string(per_row) +
                     " alias=" + std::to_string(alias));
        const int64_t bn = per_row ? 1 : n;
        const auto a = rng.vec(n * rows, -4, 4), b = rng.vec(bn * rows, -2, 2);
        std::vector<float> out[2];
        both([&](Handle& h, bool g) {
          sy_tensor ta = h.make(a, {n, rows}), tb = h.make(b, {bn, rows});
          sy_tensor ty = alias == 1 ? ta : alias == 2 ? tb : h.zeros({n, rows});
          ASSERT_EQ(h.api().mul(h.get(), &ta, &tb, &ty), SY_OK) << h.error();
          out[g] = h.read(ty);
        });
        EXPECT_EQ(out[1], out[0]);
      }
}

TEST_P(GpuOps, UnaryKinds) {
  Rng rng(18);
  const int64_t n = 70001;
  const auto x = rng.vec(n, -30, 30);
  for (uint32_t kind : {SY_UNARY_SIGMOID, SY_UNARY_RELU_SQR, SY_UNARY_GELU, SY_UNARY_TANH})
    for (bool in_place : {false, true}) {
      SCOPED_TRACE("kind=" + std::to_string(kind) + " in_place=" + std::to_string(in_place));
      std::vector<float> out[2];
      both([&](Handle& h, bool g) {
        sy_tensor tx = h.make(x, {n}), ty = in_place ? tx : h.zeros({n});
        const sy_unary_args a{sizeof a, kind, &tx, &ty};
        ASSERT_EQ(h.api().unary(h.get(), &a), SY_OK) << h.error();
        out[g] = h.read(ty);
      });
      // GELU far below 0 is a subnormal in cpu_ref's double and 0 here: an absolute floor.
      EXPECT_TRUE(sy::test::close(out[1], out[0], abs_of(out[0]), kTol, 1e-37));
    }
}

// Sliding windows shorter and longer than the contexts, on decode tokens and on prefill tiles
// whose tokens' windows start at different positions; F32 and F16 caches. The cache is filled
// directly: attention reads it whatever wrote it.
TEST_P(GpuOps, AttentionSlidingWindowDecodeAndPrefill) {
  const int64_t D = 64, H = 4, HK = 2, bs = 16, W = D * HK;
  // Decode at 350 and at 0, prompt chunks at 3..11 and 320..332, a fresh 6-token prompt, decode
  // at 17.
  const std::vector<int32_t> first = {350, 0, 3, 320, 0, 17}, count = {1, 1, 9, 13, 6, 1};
  const int64_t n_seqs = (int64_t)first.size(), max_blocks = 24, n_blocks = n_seqs * max_blocks;
  std::vector<int32_t> tables(n_seqs * max_blocks), pos;
  std::vector<uint32_t> start = {0};
  for (int64_t i = 0; i < n_seqs * max_blocks; ++i)
    tables[i] = (int32_t)(i * 37 % n_blocks);  // scattered, no block shared
  for (int64_t s = 0; s < n_seqs; ++s) {
    for (int32_t t = 0; t < count[s]; ++t) pos.push_back(first[s] + t);
    start.push_back((uint32_t)pos.size());
  }
  const int64_t T = (int64_t)pos.size();
  Rng rng(19);
  const auto kc = rng.vec(W * bs * n_blocks, -2, 2), vc = rng.vec(W * bs * n_blocks, -2, 2);
  const auto q = rng.vec(D * H * T, -2, 2);
  std::vector<uint16_t> kc16(kc.size()), vc16(vc.size());
  for (size_t i = 0; i < kc.size(); ++i)
    kc16[i] = sy::dtype::f32_to_f16(kc[i]), vc16[i] = sy::dtype::f32_to_f16(vc[i]);
  const auto sink = rng.vec(H, -3, 3);
  for (const uint32_t kv : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_F16})
    for (uint64_t window : {0, 1, 5, 16, 300})
      for (int extra : {0, 1, 2}) {  // gpt-oss's sinks, Gemma 2's soft-cap (ABI 1.6)
        const bool sinks = extra == 1;
        const float softcap = extra == 2 ? 0.7f : 0.0f;
        SCOPED_TRACE(std::string(sy::dtype::name(kv)) + " cache, window " + std::to_string(window) +
                     (sinks ? ", sinks" : "") + (softcap != 0.0f ? ", softcap" : ""));
        std::vector<float> out[2];
        both([&](Handle& h, bool g) {
          const bool f16 = kv == SY_DTYPE_F16;
          sy_tensor tkc =
              f16 ? h.make(kc16, {W, bs * n_blocks}, kv) : h.make(kc, {W, bs * n_blocks});
          sy_tensor tvc =
              f16 ? h.make(vc16, {W, bs * n_blocks}, kv) : h.make(vc, {W, bs * n_blocks});
          sy_tensor tq = h.make(q, {D, H, T}), to = h.zeros({D, H, T});
          sy_attention_args a{};
          a.struct_size = sizeof a;
          a.q = &tq, a.k_cache = &tkc, a.v_cache = &tvc, a.out = &to;
          a.n_kv_head = (uint32_t)HK;
          a.n_seqs = (uint32_t)n_seqs;
          a.seq_token_start = start.data();
          a.token_pos = pos.data();
          a.block_tables = tables.data();
          a.max_blocks_per_seq = (uint32_t)max_blocks;
          a.block_size = (uint32_t)bs;
          a.scale = 1.0f / std::sqrt((float)D);
          a.window = window;
          sy_tensor ts = h.make(sink, {H});
          if (sinks) a.sinks = &ts;
          a.softcap = softcap;
          ASSERT_EQ(h.api().attention(h.get(), &a), SY_OK) << h.error();
          out[g] = h.read(to);
        });
        EXPECT_TRUE(close(out[1], out[0], std::vector<double>(out[0].size(), 2.0)));  // max |v| = 2
      }
}

// gpt-oss's clamped SwiGLU against cpu_ref, past both limits, in place on either input.
TEST_P(GpuOps, SwigluOai) {
  Rng rng(21);
  const int64_t n = 70001;
  const auto gv = rng.vec(n, -12, 12), uv = rng.vec(n, -12, 12);
  for (int alias : {0, 1, 2}) {
    SCOPED_TRACE("alias=" + std::to_string(alias));
    std::vector<float> out[2];
    both([&](Handle& h, bool g) {
      sy_tensor tg = h.make(gv, {n}), tu = h.make(uv, {n});
      sy_tensor ty = alias == 1 ? tg : alias == 2 ? tu : h.zeros({n});
      const sy_swiglu_oai_args a{sizeof a, 0, &tg, &tu, &ty, 1.702f, 7.0f};
      ASSERT_EQ(h.api().swiglu_oai(h.get(), &a), SY_OK) << h.error();
      out[g] = h.read(ty);
    });
    EXPECT_TRUE(sy::test::close(out[1], out[0], abs_of(out[0]), kTol, 1e-30));
  }
}

// Sigmoid and softmax gating with and without a selection bias: the bias chooses (a large one
// picks an expert of low p), the weights stay unbiased; exact ties keep the lower id first.
TEST_P(GpuOps, MoeGateSigmoidSelectionBiasAndTies) {
  uint64_t seed = 600;
  for (int64_t E : {8, 64})
    for (uint32_t gating : {SY_MOE_GATING_SIGMOID, SY_MOE_GATING_SOFTMAX})
      for (bool with_bias : {false, true})
        for (int64_t k : {1, 3}) {
          SCOPED_TRACE("E=" + std::to_string(E) + " gating=" + std::to_string(gating) +
                       " bias=" + std::to_string(with_bias) + " k=" + std::to_string(k));
          const int64_t T = 5;
          Rng rng(seed++);
          auto logits = rng.vec(E * T, -3, 3);
          auto bias = rng.vec(E, -0.1f, 0.1f);
          // Experts 1 and 3 tie above the others, biased or not; expert 5's bias puts it first,
          // even where its logit is low (token 2).
          for (int64_t t = 0; t < T; ++t) logits[t * E + 1] = logits[t * E + 3] = 4.0f;
          bias[1] = bias[3] = 0.1f, bias[5] = 2.0f;
          logits[2 * E + 5] = -3.0f;
          std::vector<int32_t> ids[2];
          std::vector<float> wts[2];
          both([&](Handle& h, bool g) {
            sy_tensor tl = h.make(logits, {E, T}), tb = h.make(bias, {E});
            sy_tensor ti = h.zeros({k, T}, SY_DTYPE_I32), tw = h.zeros({k, T});
            const sy_moe_gate_args a{sizeof a, gating, &tl,  &ti,
                                     &tw,      k > 1,  2.5f, with_bias ? &tb : nullptr};
            ASSERT_EQ(h.api().moe_gate(h.get(), &a), SY_OK) << h.error();
            ids[g] = h.read<int32_t>(ti);
            wts[g] = h.read(tw);
          });
          ASSERT_EQ(ids[1], ids[0]);
          const std::vector<int32_t> top =
              with_bias ? std::vector<int32_t>{5, 1, 3} : std::vector<int32_t>{1, 3};
          for (int64_t t = 0; t < T; ++t)
            for (int64_t j = 0; j < std::min<int64_t>(k, (int64_t)top.size()); ++j)
              EXPECT_EQ(ids[0][t * k + j], top[j]) << "token " << t << " slot " << j;
          EXPECT_TRUE(close(wts[1], wts[0], abs_of(wts[0])));
        }
}

// A fused gate_up weight {K, 2N, E}: the gate and up halves as two strided views, each with a
// bias {N, E} and a scale {E}; one input per token or per slot; the GEMV (up to 16 pairs) and
// the routed GEMM.
TEST_P(GpuOps, MoeMatmulStridedExpertsWithBiasAndScale) {
  const int64_t E = 5, N = 24, k = 2;
  uint64_t seed = 700;
  for (uint32_t dt : {SY_DTYPE_F32, SY_DTYPE_Q8_0, SY_DTYPE_Q4_K})
    for (int64_t T : {1, 3, 30})
      for (int epilogue : {0, 1, 2}) {  // none, bias, bias and scale
        const int64_t K = row_len(dt, 64), xs = T == 3 ? k : 1, rb = sy::dtype::row_bytes(dt, K);
        SCOPED_TRACE(std::string(sy::dtype::name(dt)) + " T=" + std::to_string(T) +
                     " epilogue=" + std::to_string(epilogue) + " x_slots=" + std::to_string(xs));
        Rng rng(seed++);
        const auto wq = encode(dt, rng.vec(K * 2 * N * E), K, 2 * N * E);
        const auto x = rng.vec(K * xs * T), bias = rng.vec(N * E, -2, 2);
        const auto scale = rng.vec(E, -2, 2);
        std::vector<int32_t> ids(k * T);
        for (int64_t t = 0; t < T; ++t)
          ids[t * k] = (int32_t)((t * 3 + 4) % E), ids[t * k + 1] = (int32_t)((t * 3 + 1) % E);
        std::vector<float> ys[2][2];
        both([&](Handle& h, bool g) {
          sy_tensor tw = h.make(wq, {K, 2 * N, E}, dt), tx = h.make(x, {K, xs, T});
          sy_tensor ti = h.make(ids, {k, T}, SY_DTYPE_I32), tb = h.make(bias, {N, E});
          sy_tensor tsc = h.make(scale, {E});
          for (int half : {0, 1}) {
            sy_tensor view = Handle::tensor(dt, tw.buffer, half * N * rb, {K, N, E});
            sy_tensor ty = h.zeros({N, k, T});
            const sy_moe_matmul_args a{sizeof a,
                                       0,
                                       &tx,
                                       &view,
                                       &ti,
                                       &ty,
                                       (uint64_t)(2 * N * rb),
                                       epilogue >= 1 ? &tb : nullptr,
                                       epilogue == 2 ? &tsc : nullptr};
            ASSERT_EQ(h.api().moe_matmul(h.get(), &a), SY_OK) << h.error();
            ys[g][half] = h.read(ty);
          }
        });
        const auto w = decode(dt, wq, K, 2 * N * E);
        for (int half : {0, 1}) {
          std::vector<double> mag(N * k * T);
          for (int64_t p = 0; p < k * T; ++p) {
            const int64_t e = ids[p], xr = (p / k) * xs + (xs == 1 ? 0 : p % k);
            for (int64_t j = 0; j < N; ++j) {
              double m = epilogue >= 1 ? std::fabs(bias[e * N + j]) : 0;
              for (int64_t c = 0; c < K; ++c)
                m += std::fabs((double)x[xr * K + c] * w[((e * 2 + half) * N + j) * K + c]);
              mag[p * N + j] = m * (epilogue == 2 ? std::fabs(scale[e]) : 1);
            }
          }
          EXPECT_TRUE(close(ys[1][half], ys[0][half], mag)) << "half " << half;
        }
      }
}

// The epilogue belongs to an expert: a row whose id is out of range stays zero, bias or not.
TEST_P(GpuOps, MoeMatmulBadIdsStayZeroWithBiasAndScale) {
  const int64_t K = 32, N = 8, E = 2;
  for (int64_t T : {1, 20}) {
    std::vector<int32_t> ids(T, 1);
    ids[0] = 7;
    Rng rng(10);
    sy_tensor tx = gpu_->make(rng.vec(K * T), {K, 1, T}),
              tw = gpu_->make(rng.vec(K * N * E), {K, N, E});
    sy_tensor ti = gpu_->make(ids, {1, T}, SY_DTYPE_I32), tb = gpu_->make(rng.vec(N * E), {N, E});
    sy_tensor ts = gpu_->make(std::vector<float>{2.0f, 3.0f}, {E}), ty = gpu_->zeros({N, 1, T});
    const sy_moe_matmul_args a{sizeof a, 0, &tx, &tw, &ti, &ty, 0, &tb, &ts};
    ASSERT_EQ(gpu_->api().moe_matmul(gpu_->get(), &a), SY_OK) << gpu_->error();
    const auto y = gpu_->read(ty);
    for (int64_t j = 0; j < N; ++j) EXPECT_EQ(y[j], 0.0f) << "T=" << T << " j=" << j;
  }
}

TEST_P(GpuOps, Hybrid2LimitsAreNamed) {
  const uint32_t start[2] = {0, 1};
  const int32_t slot = 0;
  const int64_t S = 300;
  sy_tensor xbc = gpu_->zeros({4 + 2 * S, 1}), dt = gpu_->zeros({1, 1}), a = gpu_->zeros({1});
  sy_tensor st = gpu_->zeros({S, 4, 1}), y = gpu_->zeros({4, 1});
  sy_ssm_scan2_args s{};
  s.struct_size = sizeof s;
  s.n_seqs = 1;
  s.xbc = &xbc, s.dt = &dt, s.a = &a, s.state = &st, s.y = &y;
  s.seq_token_start = start;
  s.state_slots = &slot;
  EXPECT_EQ(gpu_->api().ssm_scan2(gpu_->get(), &s), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "ssm_scan2: d_state 300 above 256 not supported");
  sy_tensor qkv = gpu_->zeros({3 * S, 1}), ab = gpu_->zeros({1, 1}), m = gpu_->zeros({S, S, 1, 1});
  sy_tensor gy = gpu_->zeros({S, 1, 1}), v = gpu_->zeros({1});
  sy_gated_delta_net_args g{};
  g.struct_size = sizeof g;
  g.n_seqs = 1;
  g.qkv = &qkv, g.alpha = &ab, g.beta = &ab, g.dt_bias = &v, g.a = &v, g.state = &m, g.y = &gy;
  g.seq_token_start = start;
  g.state_slots = &slot;
  EXPECT_EQ(gpu_->api().gated_delta_net(gpu_->get(), &g), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "gated_delta_net: head size 300 above 256 not supported");
  // F32 weights are read as floats: an expert stride that is not a multiple of 4 is refused.
  const int64_t K = 16, N = 16, E = 3;
  sy_tensor w = Handle::tensor(SY_DTYPE_F32, gpu_->alloc(4096), 0, {K, N, E});
  sy_tensor x = gpu_->zeros({K, 1, 1}), ids = gpu_->zeros({1, 1}, SY_DTYPE_I32);
  sy_tensor my = gpu_->zeros({N, 1, 1});
  const sy_moe_matmul_args mm{sizeof mm, 0, &x, &w, &ids, &my, K * N * 4 + 2, nullptr, nullptr};
  EXPECT_EQ(gpu_->api().moe_matmul(gpu_->get(), &mm), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(gpu_->error(), "moe_matmul: expert_stride 1026 of F32 weights is not a multiple of 4");
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuOps, ::testing::ValuesIn(sy::test::gpu_plugins(true)), name_of);

}  // namespace
