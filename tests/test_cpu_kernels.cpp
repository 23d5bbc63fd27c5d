// cpu_onednn's dispatched kernels against cpu_ref, on whichever CPU path this process runs:
// ctest registers this binary once per path with SWITCHYARD_CPU_KERNELS set (kernels.cmake),
// and once with the variable unset (the path cpuid picks). A path this CPU lacks is skipped.
//
// Tolerances: |onednn - ref| <= rtol * mag (+ the activation quantization bound for the
// quantised types). mag is the sum of |x_k w_k| for a dot product and the largest |v| of the
// cache for attention; rtol = 1e-5 (F32 accumulation against cpu_ref's double). The GEMV of a
// quantised weight type (Q8_0 and every ggml block type) reads quantized activations
// (kernels/kernels.h), each value off by at most d / 2:
// - by default 8-bit blocks as llama.cpp's (d = max|x| / 127 per 32 values, per 256 for the
//   super-block types). With the GEMV forced, the result is checked against this file's scalar
//   reference of the same arithmetic (the same quants, then exact products in double) within
//   rtol * mag of the quantized activations: the integer dot products are exact, so only the
//   F32 scaling and accumulation differ;
// - with act_bits=16, int16 blocks (d = max|x| / 32767 per 256 values, the last block of a row
//   shorter): the bound adds sum over blocks of d / 2 * sum |w| to cpu_ref's exact result.
// Where the GEMV or the GEMM may run (the default crossover, the experts' matmuls) the bound is
// the 8-bit one around the exact result. Dequantisation (get_rows, the GEMM's panels) must equal
// cpu_ref's codecs bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_fixture.h"
#include "op_compare.h"
#include "switchyard/common/dtype.h"
#include "test_rng.h"

namespace {

using sy::test::Handle;
using sy::test::LoadedPlugin;

constexpr double kRtol = 1e-5;
// Every weight dtype of the table: F32, F16, BF16 and ggml's block types.
std::vector<uint32_t> weight_dtypes() {
  std::vector<uint32_t> v;
  for (const sy::dtype::Traits& t : sy::dtype::kTable)
    if (t.to_f32) v.push_back(t.id);
  return v;
}
const std::vector<uint32_t> kDtypes = weight_dtypes();

bool is_float(uint32_t dt) {
  return sy::dtype::block_elems(dt) == 1;
}

// Row lengths: odd ones for the float types, an odd number of blocks for the block types.
std::vector<int64_t> row_lengths(uint32_t dt) {
  if (is_float(dt)) return {1, 7, 37, 257, 801};
  const int64_t b = sy::dtype::block_elems(dt);
  return b == 32 ? std::vector<int64_t>{32, 96, 800} : std::vector<int64_t>{256, 768, 1280};
}
const char* const kPaths[] = {"scalar", "avx2", "avx512", "avx512_vnni", "avx_vnni"};

// The activation quantization's bound on |dot(x, w) - dot(quantized x, w)|: blocks of `block`
// values with `levels` steps each side of zero.
double quant_bound(const float* x, const float* w, int64_t k, int64_t block, double levels) {
  double bound = 0;
  for (int64_t b0 = 0; b0 < k; b0 += block) {
    double amax = 0, wsum = 0;
    for (int64_t c = b0; c < std::min<int64_t>(k, b0 + block); ++c) {
      amax = std::max(amax, std::fabs((double)x[c]));
      wsum += std::fabs((double)w[c]);
    }
    bound += amax / levels / 2.0 * wsum;
  }
  return bound * 1.0001;
}
double q16_bound(const float* x, const float* w, int64_t k) {
  return quant_bound(x, w, k, 256, 32767.0);
}
// The 8-bit formats' block: one scale per weight block (32 or 256 values).
double q8_bound(uint32_t dtype, const float* x, const float* w, int64_t k) {
  return quant_bound(x, w, k, sy::dtype::block_elems(dtype), 127.0);
}

// The 8-bit activations of one row as the kernels compute them, in the same F32 operations
// (max |x| per block, q = round(x * (127 / max)) ties to even, d = max / 127), as values q * d.
std::vector<double> q8_values(const float* x, int64_t k, int64_t block) {
  std::vector<double> out(k);
  for (int64_t b0 = 0; b0 < k; b0 += block) {
    float amax = 0.0f;
    for (int64_t c = b0; c < b0 + block; ++c) amax = std::max(amax, std::fabs(x[c]));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f, d = amax / 127.0f;
    for (int64_t c = b0; c < b0 + block; ++c) out[c] = std::nearbyint(x[c] * id) * (double)d;
  }
  return out;
}

// What the onednn result is checked against.
enum class Expect {
  exact,        // cpu_ref within rtol * mag (float weights, or the GEMM forced)
  q8,           // the 8-bit GEMV: the scalar reference of the same arithmetic
  q16,          // the int16 GEMV (act_bits=16): cpu_ref within the int16 bound
  q8_or_exact,  // GEMV or GEMM: cpu_ref within the 8-bit bound
};

struct Rng : sy::test::XorShiftRng {
  explicit Rng(uint64_t seed) : XorShiftRng(seed, 7) {}
};

// ---- what this CPU has, read independently of the plugin (from /proc/cpuinfo) ----

std::set<std::string> cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream ss(line.substr(line.find(':') + 1));
      return {std::istream_iterator<std::string>(ss), std::istream_iterator<std::string>()};
    }
  return {};
}

// The first feature path `p` needs that this CPU lacks, in the plugin's names; "" if none.
std::string missing_feature(const std::string& p) {
  const auto f = cpu_flags();
  if (p == "scalar") return "";
  for (const char* need : {"avx2", "fma", "f16c"})
    if (!f.count(need)) return need;
  if (p == "avx2") return "";
  if (p == "avx_vnni") return f.count("avx_vnni") ? "" : "avx_vnni";
  for (const char* need : {"avx512f", "avx512bw", "avx512vl"})
    if (!f.count(need)) return need;
  if (p == "avx512") return "";
  return f.count("avx512_vnni") ? "" : "avx512_vnni";
}

std::string forced_path() {
  const char* v = std::getenv("SWITCHYARD_CPU_KERNELS");
  return v ? v : "";
}

// The path the plugin should run: the forced one, else the best this CPU has.
std::string expected_path() {
  if (!forced_path().empty()) return forced_path();
  for (const char* p : {"avx512_vnni", "avx512", "avx_vnni", "avx2"})
    if (missing_feature(p).empty()) return p;
  return "scalar";
}

class CpuKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string p = forced_path();
    if (!p.empty() && !missing_feature(p).empty())
      GTEST_SKIP() << "this CPU lacks " << missing_feature(p) << " for path " << p;
    onednn_ = &LoadedPlugin::backend("cpu_onednn").iface();
    ref_ = &LoadedPlugin::backend("cpu_ref").iface();
  }
  const sy_backend_iface* onednn_ = nullptr;
  const sy_backend_iface* ref_ = nullptr;
};

// ---- the path ----

TEST_F(CpuKernels, PluginRunsTheExpectedPathAndNamesIt) {
  const std::string desc = LoadedPlugin::backend("cpu_onednn").info().description;
  const std::string want =
      "; " + expected_path() + " kernels (" +
      (forced_path().empty() ? "from cpuid" : "forced by SWITCHYARD_CPU_KERNELS") + ")";
  EXPECT_NE(desc.find(want), std::string::npos) << desc;
}

// The entry refuses an unknown path and a path this CPU lacks, with the reason; every entry
// re-reads the variable, so the test restores it and re-enters at the end.
TEST_F(CpuKernels, EntryRefusesUnknownPathsAndPathsTheCpuLacks) {
  const LoadedPlugin& p = LoadedPlugin::backend("cpu_onednn");
  const std::string saved = forced_path();
  auto enter = [&](const char* value, std::string* error) {
    if (value)
      setenv("SWITCHYARD_CPU_KERNELS", value, 1);
    else
      unsetenv("SWITCHYARD_CPU_KERNELS");
    char buf[256] = {};
    sy_plugin_info info = {};
    info.struct_size = sizeof info;
    info.error_buf = buf;
    info.error_buf_size = sizeof buf;
    const sy_status st = p.entry()(SY_ABI_VERSION, sy::test::test_host_api(), &info);
    *error = buf;
    return st;
  };
  std::string error;
  EXPECT_EQ(enter("avx1024", &error), SY_ERR_UNAVAILABLE);
  EXPECT_EQ(error,
            "cpu_onednn: SWITCHYARD_CPU_KERNELS=avx1024: unknown path (known: scalar, avx2, "
            "avx512, avx512_vnni, avx_vnni)");
  for (const char* path : kPaths) {
    SCOPED_TRACE(path);
    const std::string missing = missing_feature(path);
    if (missing.empty()) {
      EXPECT_EQ(enter(path, &error), SY_OK) << error;
    } else {
      EXPECT_EQ(enter(path, &error), SY_ERR_UNAVAILABLE);
      EXPECT_EQ(error, std::string("cpu_onednn: SWITCHYARD_CPU_KERNELS=") + path +
                           ": this CPU lacks " + missing);
    }
  }
  EXPECT_EQ(enter(saved.empty() ? nullptr : saved.c_str(), &error), SY_OK) << error;
}

// ---- GEMV ----

struct MatmulResult {
  std::vector<float> got, ref;
  std::vector<double> bound;
};

// y = W x on cpu_onednn (with `params`) and cpu_ref; the bound per element.
// pack: cpu_onednn multiplies by its weight_pack of W (*packed: whether it made one).
MatmulResult matmul_both(const sy_backend_iface& onednn, const sy_backend_iface& ref,
                         const std::vector<sy_param>& params, uint32_t dtype, int64_t m, int64_t k,
                         int64_t n, uint64_t seed, Expect expect, bool pack = false,
                         bool* packed = nullptr) {
  if (is_float(dtype)) expect = Expect::exact;
  Rng rng(seed);
  const std::vector<float> x = rng.vec(m * k, -2.0f, 2.0f), wf = rng.vec(k * n);
  const int64_t rb = sy::dtype::row_bytes(dtype, k);
  std::vector<uint8_t> wq(rb * n);
  for (int64_t j = 0; j < n; ++j) sy::dtype::row_from_f32(dtype, &wf[j * k], &wq[j * rb], k);
  std::vector<float> w(k * n);  // what both backends multiply by
  for (int64_t j = 0; j < n; ++j) sy::dtype::row_to_f32(dtype, &wq[j * rb], &w[j * k], k);
  MatmulResult r;
  for (int b = 0; b < 2; ++b) {
    Handle h(b ? ref : onednn, b ? std::vector<sy_param>{} : params);
    EXPECT_EQ(h.status(), SY_OK);
    sy_tensor tx = h.make(x, {k, m}), tw = h.make(wq, {k, n}, dtype), ty = h.zeros({n, m});
    bool made = false;  // where the caller does not ask
    if (pack && b == 0) tw = h.pack(tw, packed ? packed : &made);
    EXPECT_EQ(h.api().matmul(h.get(), &tx, &tw, &ty), SY_OK) << h.error();
    (b ? r.ref : r.got) = h.read(ty);
  }
  r.bound.resize(m * n);
  for (int64_t i = 0; i < m; ++i) {
    const std::vector<double> xq = q8_values(&x[i * k], k, sy::dtype::block_elems(dtype));
    for (int64_t j = 0; j < n; ++j) {
      const float* wj = &w[j * k];
      double mag = 0, quant = 0;
      if (expect == Expect::q8) {  // the same quants, exact products
        double dot = 0;
        for (int64_t c = 0; c < k; ++c) {
          dot += xq[c] * wj[c];
          mag += std::fabs(xq[c] * wj[c]);
        }
        r.ref[i * n + j] = (float)dot;
        mag *= 1.0001;  // the float rounding of the reference itself
      } else {
        for (int64_t c = 0; c < k; ++c) mag += std::fabs((double)x[i * k + c] * wj[c]);
      }
      if (expect == Expect::q16) quant = q16_bound(&x[i * k], wj, k);
      if (expect == Expect::q8_or_exact) quant = q8_bound(dtype, &x[i * k], wj, k);
      r.bound[i * n + j] = kRtol * mag + quant;
    }
  }
  return r;
}

::testing::AssertionResult within(const MatmulResult& r) {
  for (size_t i = 0; i < r.got.size(); ++i)
    if (!(std::fabs((double)r.got[i] - r.ref[i]) <= r.bound[i]))
      return ::testing::AssertionFailure() << "element " << i << ": got " << r.got[i] << ", ref "
                                           << r.ref[i] << ", bound " << r.bound[i];
  return ::testing::AssertionSuccess();
}

// Every dtype, M = 1..9 (the kernel's 8-row groups and one more), odd N, and K odd where the
// dtype allows it (block types: an odd number of whole blocks). With the GEMV forced for every
// M (8-bit activations, the default, and int16 ones), with the GEMM (dequantised panels)
// forced, and with the default crossover.
TEST_F(CpuKernels, GemvEveryDtypeMOneToNineOddKAndN) {
  struct Mode {
    const char *gemv_max_m, *act_bits, *name;
    Expect expect;
  };
  const Mode modes[] = {{"64", nullptr, " gemv forced", Expect::q8},
                        {"64", "16", " gemv forced, act_bits=16", Expect::q16},
                        {"0", nullptr, " gemm forced", Expect::exact},
                        {nullptr, nullptr, " default crossover", Expect::q8_or_exact}};
  uint64_t seed = 1;
  for (const Mode& mode : modes)
    for (uint32_t dtype : kDtypes) {
      std::vector<sy_param> params;
      if (mode.gemv_max_m) params.push_back({"gemv_max_m", mode.gemv_max_m});
      if (mode.act_bits) params.push_back({"act_bits", mode.act_bits});
      for (int64_t k : row_lengths(dtype))
        for (int64_t n : {1, 3, 77})
          for (int64_t m = 1; m <= 9; ++m) {
            SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " M=" + std::to_string(m) +
                         " K=" + std::to_string(k) + " N=" + std::to_string(n) + mode.name);
            EXPECT_TRUE(
                within(matmul_both(*onednn_, *ref_, params, dtype, m, k, n, seed++, mode.expect)));
          }
    }
}

// weight_pack (ABI 1.4): every vector path packs Q4_0 and MXFP4 matrices of 16 rows or more (the
// 256-bit paths take a group in two halves), the AVX-512 paths also Q4_K and Q6_K, AVX-512 VNNI
// Q8_0 and IQ4_NL (groups of 16, the rows past the last group plain); the scalar path keeps every
// weight plain. A packed W gives the plain kernels' results: with the GEMV forced (M = 1..9, so
// passes of 4 or 8 rows and a rest, checked against the same 8-bit activations with exact
// products), the GEMM forced (its panels dequantise the groups to the plain rows' values, bit for
// bit) and the default crossover, for N with and without plain rows after the groups. Packing stays
// off with repack=0 and act_bits=16.
TEST_F(CpuKernels, PackedWeightsMatchTheReferenceEveryM) {
  const std::string path = expected_path();
  const bool vector = path != "scalar", avx512 = path.rfind("avx512", 0) == 0;
  struct Mode {
    const char* gemv_max_m;
    Expect expect;
  };
  uint64_t seed = 500;
  for (uint32_t dtype : {SY_DTYPE_Q4_K, SY_DTYPE_Q6_K, SY_DTYPE_Q4_0, SY_DTYPE_Q8_0,
                         SY_DTYPE_IQ4_NL, SY_DTYPE_MXFP4}) {
    const bool vnni_only = dtype == SY_DTYPE_Q8_0 || dtype == SY_DTYPE_IQ4_NL;
    const bool super_block = dtype == SY_DTYPE_Q4_K || dtype == SY_DTYPE_Q6_K;
    const bool has_kernel = vnni_only ? path == "avx512_vnni" : super_block ? avx512 : vector;
    const int64_t block = sy::dtype::block_elems(dtype);
    for (const Mode& mode :
         {Mode{"64", Expect::q8}, Mode{"0", Expect::exact}, Mode{nullptr, Expect::q8_or_exact}}) {
      std::vector<sy_param> params;
      if (mode.gemv_max_m) params.push_back({"gemv_max_m", mode.gemv_max_m});
      for (int64_t k : {block, block == 256 ? int64_t{768} : int64_t{800}})
        for (int64_t n : {16, 33, 77, 160})
          for (int64_t m = 1; m <= 9; ++m) {
            SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " M=" + std::to_string(m) +
                         " K=" + std::to_string(k) + " N=" + std::to_string(n) +
                         " gemv_max_m=" + (mode.gemv_max_m ? mode.gemv_max_m : "default"));
            bool packed = false;
            const MatmulResult r = matmul_both(*onednn_, *ref_, params, dtype, m, k, n, seed,
                                               mode.expect, true, &packed);
            EXPECT_TRUE(within(r));
            EXPECT_EQ(packed, has_kernel);
            if (mode.expect == Expect::exact) {  // the GEMM's panels: the plain rows' values
              EXPECT_EQ(
                  r.got,
                  matmul_both(*onednn_, *ref_, params, dtype, m, k, n, seed, mode.expect).got);
            }
            ++seed;
          }
    }
    for (const std::vector<sy_param>& params :
         {std::vector<sy_param>{{"repack", "0"}}, std::vector<sy_param>{{"act_bits", "16"}}}) {
      SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " " + params[0].key + "=" +
                   params[0].value);
      bool packed = true;
      matmul_both(*onednn_, *ref_, params, dtype, 1, 256, 32, seed++, Expect::q8_or_exact, true,
                  &packed);
      EXPECT_FALSE(packed);
    }
  }
  for (uint32_t dtype : {SY_DTYPE_F32, SY_DTYPE_Q5_K, SY_DTYPE_Q5_0}) {  // no packed layout
    bool packed = true;
    matmul_both(*onednn_, *ref_, {}, dtype, 1, 256, 32, seed++, Expect::q8_or_exact, true, &packed);
    EXPECT_FALSE(packed) << sy::dtype::name(dtype);
  }
}

// A packed weight is matmul's w only: reading, writing or mapping its buffer, or passing it to
// another op, is refused by name; weight_pack refuses a NULL out and a 3-D tensor.
TEST_F(CpuKernels, PackedWeightsAreRefusedOutsideMatmul) {
  if (expected_path() == "scalar") GTEST_SKIP() << "no packed layout on this path";
  Handle h(*onednn_);
  const int64_t k = 256, n = 32;
  const std::vector<uint8_t> wq(sy::dtype::row_bytes(SY_DTYPE_Q4_0, k) * n, 0x11);
  bool packed = false;
  const sy_tensor plain = h.make(wq, {k, n}, SY_DTYPE_Q4_0), w = h.pack(plain, &packed);
  ASSERT_TRUE(packed);
  std::vector<uint8_t> bytes(16);
  EXPECT_EQ(h.api().buffer_read(h.get(), w.buffer, 0, bytes.data(), bytes.size()),
            SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(), "buffer_read: the buffer holds a packed weight");
  EXPECT_EQ(h.api().buffer_write(h.get(), w.buffer, 0, bytes.data(), bytes.size()),
            SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(), "buffer_write: the buffer holds a packed weight");
  EXPECT_EQ(h.api().buffer_host_ptr(h.get(), w.buffer), nullptr);
  EXPECT_EQ(h.error(), "buffer_host_ptr: the buffer holds a packed weight");
  const int32_t ids[1] = {3};
  sy_tensor dst = h.zeros({k, 1});
  EXPECT_EQ(h.api().get_rows(h.get(), &w, ids, 1, &dst), SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(),
            "get_rows: table is a packed weight (weight_pack): only matmul's w may read it");
  sy_buffer_t again = nullptr;
  EXPECT_EQ(h.api().weight_pack(h.get(), &w, &again), SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(),
            "weight_pack: w is a packed weight (weight_pack): only matmul's w may read it");
  EXPECT_EQ(h.api().weight_pack(h.get(), &plain, nullptr), SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(), "weight_pack: out is NULL");
  const sy_tensor cube = Handle::tensor(SY_DTYPE_Q4_0, plain.buffer, 0, {k, n / 2, 2});
  EXPECT_EQ(h.api().weight_pack(h.get(), &cube, &again), SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(), "weight_pack: w has ne[2]=2, expected 1");
}

// The 8-bit kernels are exact in their integer part: activations that are already whole
// multiples of a power of two with at most 127 levels per block quantize without error, so the
// result is cpu_ref's within F32 rounding (an offset or sign error in a kernel shows at once).
TEST_F(CpuKernels, Q8GemvExactOnActivationsThatQuantizeExactly) {
  for (uint32_t dtype : kDtypes) {
    if (is_float(dtype)) continue;
    SCOPED_TRACE(sy::dtype::name(dtype));
    const int64_t k = 3 * sy::dtype::block_elems(dtype), m = 3, n = 21;
    Rng rng(dtype + 1000);
    std::vector<float> x(m * k);
    for (int64_t i = 0; i < m * k; ++i)  // 127 in every block: d = 1 / 64 exactly
      x[i] = i % 32 == 5 ? 127.0f / 64 : (float)((int)(rng.next() % 255) - 127) / 64;
    const std::vector<float> wf = rng.vec(k * n);
    const int64_t rb = sy::dtype::row_bytes(dtype, k);
    std::vector<uint8_t> wq(rb * n);
    for (int64_t j = 0; j < n; ++j) sy::dtype::row_from_f32(dtype, &wf[j * k], &wq[j * rb], k);
    std::vector<float> out[2];
    for (int b = 0; b < 2; ++b) {
      Handle h(b ? *ref_ : *onednn_);
      sy_tensor tx = h.make(x, {k, m}), tw = h.make(wq, {k, n}, dtype), ty = h.zeros({n, m});
      ASSERT_EQ(h.api().matmul(h.get(), &tx, &tw, &ty), SY_OK) << h.error();
      out[b] = h.read(ty);
    }
    std::vector<float> w(k * n);
    for (int64_t j = 0; j < n; ++j) sy::dtype::row_to_f32(dtype, &wq[j * rb], &w[j * k], k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double mag = 0;
        for (int64_t c = 0; c < k; ++c) mag += std::fabs((double)x[i * k + c] * w[j * k + c]);
        EXPECT_LE(std::fabs((double)out[0][i * n + j] - out[1][i * n + j]), kRtol * mag)
            << "row " << i << " column " << j;
      }
  }
}

TEST_F(CpuKernels, ActBitsOtherThanEightOrSixteenIsRefused) {
  Handle h(*onednn_, {{"act_bits", "12"}});
  EXPECT_NE(h.status(), SY_OK);
}

// Larger M with the default crossover: the prefill side of each dtype (GEMV or GEMM, whichever
// the measured default picks), the activations quantized once for all rows.
TEST_F(CpuKernels, PrefillSizedMatmulsEveryDtype) {
  uint64_t seed = 900;
  for (uint32_t dtype : kDtypes)
    for (int64_t m : {16, 37}) {
      const int64_t k = is_float(dtype) ? 257 : 2 * sy::dtype::block_elems(dtype) * 3;
      SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " M=" + std::to_string(m));
      EXPECT_TRUE(
          within(matmul_both(*onednn_, *ref_, {}, dtype, m, k, 45, seed++, Expect::q8_or_exact)));
    }
}

// Prefill shapes, M from 9 to 600 (the integer kernels' passes of 4 or 8 rows and a rest), N
// odd, K an odd number of blocks: every dtype, plain and, where the path packs it, packed. With
// the default dispatch (per weight: the integer kernels up to the measured crossover, at every M
// for packed weights, then the dequantised GEMM) against cpu_ref within the 8-bit bound, and
// with the integer kernels forced against the same 8-bit activations, exact products; a packed
// weight's default result is the forced kernels' own, bit for bit.
TEST_F(CpuKernels, PrefillShapesEveryDtypePlainAndPacked) {
  uint64_t seed = 3000;
  const std::pair<int64_t, int64_t> shapes[] = {{9, 77}, {33, 45}, {100, 35}, {257, 19}, {600, 33}};
  const std::vector<sy_param> forced = {{"gemv_max_m", "1048576"}};
  for (uint32_t dtype : kDtypes)
    for (bool pack : {false, true}) {
      if (pack && is_float(dtype)) continue;
      const int64_t block = sy::dtype::block_elems(dtype);
      for (auto [m, n] : shapes) {
        const int64_t k = is_float(dtype) ? 333 : (m == 600 ? 5 : 3) * block;
        SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + (pack ? " packed" : " plain") + " M=" +
                     std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n));
        bool packed = false;  // where this path has no packed layout: the plain rows again
        const MatmulResult dflt =
            matmul_both(*onednn_, *ref_, {}, dtype, m, k, n, seed, Expect::q8_or_exact, pack);
        const MatmulResult kernels =
            matmul_both(*onednn_, *ref_, forced, dtype, m, k, n, seed++, Expect::q8, pack, &packed);
        EXPECT_TRUE(within(dflt)) << "default dispatch";
        EXPECT_TRUE(within(kernels)) << "integer kernels forced";
        if (packed) {
          EXPECT_EQ(dflt.got, kernels.got);
        }
      }
    }
}

// get_rows decodes with the path's dequantisation, the one the GEMM's panels use: equal to
// cpu_ref's (the dtype table's codecs) bit for bit, for every dtype.
TEST_F(CpuKernels, DequantisationEqualsTheCodecsBitForBit) {
  for (uint32_t dtype : kDtypes) {
    const int64_t k = is_float(dtype) ? 301 : 3 * sy::dtype::block_elems(dtype), rows = 40;
    SCOPED_TRACE(sy::dtype::name(dtype));
    Rng rng(dtype + 77);
    const std::vector<float> f = rng.vec(k * rows, -3.0f, 3.0f);
    const int64_t rb = sy::dtype::row_bytes(dtype, k);
    std::vector<uint8_t> table(rb * rows);
    for (int64_t j = 0; j < rows; ++j) sy::dtype::row_from_f32(dtype, &f[j * k], &table[j * rb], k);
    const std::vector<int32_t> ids = {5, 0, 39, 5, 17, 22};
    std::vector<float> got[2];
    for (int b = 0; b < 2; ++b) {
      Handle h(b ? *ref_ : *onednn_);
      sy_tensor tt = h.make(table, {k, rows}, dtype), td = h.zeros({k, (int64_t)ids.size()});
      ASSERT_EQ(h.api().get_rows(h.get(), &tt, ids.data(), (uint32_t)ids.size(), &td), SY_OK)
          << h.error();
      got[b] = h.read(td);
    }
    ASSERT_EQ(std::memcmp(got[0].data(), got[1].data(), got[0].size() * sizeof(float)), 0);
  }
}

// The grouped expert matmul runs the same kernels per expert: decode (one token, its k experts
// on the GEMV), a small batch, and a prefill-sized batch (experts' rows on the GEMM).
TEST_F(CpuKernels, MoeMatmulEveryBlockFamily) {
  const int64_t n_expert = 5, n_used = 2, N = 19;
  uint64_t seed = 300;
  for (uint32_t dtype : {SY_DTYPE_Q4_0, SY_DTYPE_Q5_1, SY_DTYPE_Q8_0, SY_DTYPE_Q2_K, SY_DTYPE_Q3_K,
                         SY_DTYPE_Q4_K, SY_DTYPE_Q5_K, SY_DTYPE_Q6_K, SY_DTYPE_IQ4_XS})
    for (int64_t T : {1, 7, 60}) {
      SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " tokens=" + std::to_string(T));
      const int64_t K = 2 * sy::dtype::block_elems(dtype) * (dtype == SY_DTYPE_Q4_0 ? 5 : 1);
      Rng rng(seed++);
      const std::vector<float> x = rng.vec(K * T, -2.0f, 2.0f), wf = rng.vec(K * N * n_expert);
      const int64_t rb = sy::dtype::row_bytes(dtype, K);
      std::vector<uint8_t> wq(rb * N * n_expert);
      for (int64_t j = 0; j < N * n_expert; ++j)
        sy::dtype::row_from_f32(dtype, &wf[j * K], &wq[j * rb], K);
      std::vector<float> w(K * N * n_expert);
      for (int64_t j = 0; j < N * n_expert; ++j)
        sy::dtype::row_to_f32(dtype, &wq[j * rb], &w[j * K], K);
      std::vector<int32_t> ids(n_used * T);
      for (int64_t t = 0; t < T; ++t) {
        ids[t * n_used] = (int32_t)(rng.next() % n_expert);
        ids[t * n_used + 1] =
            (int32_t)((ids[t * n_used] + 1 + rng.next() % (n_expert - 1)) % n_expert);
      }
      std::vector<float> out[2];
      for (int b = 0; b < 2; ++b) {
        Handle h(b ? *ref_ : *onednn_);
        sy_tensor tx = h.make(x, {K, 1, T}), tw = h.make(wq, {K, N, n_expert}, dtype),
                  ti = h.make(ids, {n_used, T}, SY_DTYPE_I32), ty = h.zeros({N, n_used, T});
        sy_moe_matmul_args a{};
        a.struct_size = sizeof a, a.x = &tx, a.w = &tw, a.ids = &ti, a.y = &ty;
        ASSERT_EQ(h.api().moe_matmul(h.get(), &a), SY_OK) << h.error();
        out[b] = h.read(ty);
      }
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < n_used; ++j)
          for (int64_t c = 0; c < N; ++c) {
            const float* wr = &w[((int64_t)ids[t * n_used + j] * N + c) * K];
            double mag = 0;
            for (int64_t i = 0; i < K; ++i) mag += std::fabs((double)x[t * K + i] * wr[i]);
            const size_t e = (t * n_used + j) * N + c;
            EXPECT_LE(std::fabs((double)out[0][e] - out[1][e]),
                      kRtol * mag + q8_bound(dtype, &x[t * K], wr, K))
                << "token " << t << " slot " << j << " column " << c;
          }
    }
}

// Rows split across the pool's threads: N large enough for many tasks, with 1, 2 and 3
// threads (more threads than this machine's cores still gives the same result).
TEST_F(CpuKernels, GemvSplitsRowsAcrossThreads) {
  for (const char* threads : {"1", "2", "3"})
    for (uint32_t dtype : kDtypes) {
      SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " threads=" + threads);
      const std::vector<sy_param> params = {{"threads", threads}, {"gemv_max_m", "64"}};
      EXPECT_TRUE(
          within(matmul_both(*onednn_, *ref_, params, dtype, 3, 768, 1031, dtype + 5, Expect::q8)));
    }
}

// Decode matmuls are queued and run together (the projections of one input in one pool job).
// A later call that reads a queued output, or writes over a queued input or output, must see
// the calls' order: the same sequence on one activation buffer, run with a synchronize after
// every call, gives the same buffer (bit for bit on one thread; on several, the kernels' row
// groups fall differently, so within rounding of the 8-bit activations).
TEST_F(CpuKernels, QueuedGemvsKeepTheCallOrder) {
  const int64_t k = 512, m = 2;
  struct Weight {
    uint32_t dtype;
    int64_t k, n;
  };
  // One input's projections: activations shared by the same format (both Q4_K), kept apart for
  // another format or bias (Q4_0's against Q5_0's), read as F32 (F16).
  const std::vector<Weight> proj = {{SY_DTYPE_Q4_K, k, 96}, {SY_DTYPE_Q6_K, k, 40},
                                    {SY_DTYPE_Q4_0, k, 40}, {SY_DTYPE_Q5_0, k, 24},
                                    {SY_DTYPE_F16, k, 40},  {SY_DTYPE_Q8_0, k, 24},
                                    {SY_DTYPE_Q4_K, k, 33}};
  const Weight w_into_x = {SY_DTYPE_F16, k, k}, w_from_y0 = {SY_DTYPE_Q8_0, 96, 64},
               w_wide = {SY_DTYPE_Q8_0, k, 200};
  Rng rng(77);
  auto quantized = [&](const Weight& w) {
    const std::vector<float> f = rng.vec(w.k * w.n);
    const int64_t rb = sy::dtype::row_bytes(w.dtype, w.k);
    std::vector<uint8_t> q(rb * w.n);
    for (int64_t j = 0; j < w.n; ++j)
      sy::dtype::row_from_f32(w.dtype, &f[j * w.k], &q[j * rb], w.k);
    return q;
  };
  std::vector<std::vector<uint8_t>> wq;
  for (const Weight& w : proj) wq.push_back(quantized(w));
  const std::vector<uint8_t> wq_into_x = quantized(w_into_x), wq_from_y0 = quantized(w_from_y0),
                             wq_wide = quantized(w_wide);
  // The activation buffer: x, u, then each projection's output, then z; offsets in floats.
  std::vector<int64_t> y_at;
  int64_t used = 2 * k * m;
  for (const Weight& w : proj) y_at.push_back(used), used += w.n * m;
  const int64_t z_at = used;
  used += w_from_y0.n * m + k * m;
  const int64_t wide_at = used, races = 16;
  used += races * w_wide.n * m;
  std::vector<float> init = rng.vec(used, -2.0f, 2.0f);

  auto run = [&](const char* threads, bool sync_each) {
    Handle h(*onednn_, {{"threads", threads}});
    const sy_buffer_t act = h.upload(init.data(), init.size() * sizeof(float));
    auto f32 = [&](int64_t at, int64_t n) {
      return Handle::tensor(SY_DTYPE_F32, act, at * sizeof(float), {n, m});
    };
    // Every weight uploaded first: a buffer write runs what is queued.
    auto upload = [&](const std::vector<uint8_t>& w, const Weight& shape) {
      return h.make(w, {shape.k, shape.n}, shape.dtype);
    };
    std::vector<sy_tensor> tw;
    for (size_t i = 0; i < proj.size(); ++i) tw.push_back(upload(wq[i], proj[i]));
    const sy_tensor tw_into_x = upload(wq_into_x, w_into_x);
    const sy_tensor tw_from_y0 = upload(wq_from_y0, w_from_y0), tw_wide = upload(wq_wide, w_wide);
    auto call = [&](const sy_tensor& x, const sy_tensor& w, const sy_tensor& y) {
      EXPECT_EQ(h.api().matmul(h.get(), &x, &w, &y), SY_OK) << h.error();
      if (sync_each) {
        EXPECT_EQ(h.api().synchronize(h.get()), SY_OK);
      }
    };
    const sy_tensor x = f32(0, k), u = f32(k * m, k);
    for (size_t i = 0; i < proj.size(); ++i) call(x, tw[i], f32(y_at[i], proj[i].n));
    call(u, tw_into_x, x);                                     // over the queued input
    call(x, tw[0], f32(y_at[1], proj[0].n));                   // reads it, over an output
    call(f32(y_at[1], proj[0].n), tw_from_y0, f32(z_at, 64));  // reads a queued output
    call(x, tw[1], f32(z_at + 32 * m, proj[1].n));             // partly over it
    // Over a queued output's middle rows: run in one job, two threads would write them in
    // either order (the wide rows there come late in the first thread's share), so a few times.
    for (int64_t r = 0; r < races; ++r) {
      const int64_t at = wide_at + r * w_wide.n * m;
      call(x, tw_wide, f32(at, w_wide.n));
      call(x, tw[1], f32(at + 100, proj[1].n));
    }
    std::vector<float> out(used);
    EXPECT_EQ(h.api().synchronize(h.get()), SY_OK);
    EXPECT_EQ(h.api().buffer_read(h.get(), act, 0, out.data(), used * sizeof(float)), SY_OK);
    return out;
  };
  for (const char* threads : {"1", "2", "3"}) {
    SCOPED_TRACE(std::string("threads=") + threads);
    const std::vector<float> queued = run(threads, false), ordered = run(threads, true);
    float top = 0;
    for (float v : ordered) top = std::max(top, std::fabs(v));
    const float tol = std::string(threads) == "1" ? 0.0f : 1e-3f * top;
    for (int64_t i = 0; i < used; ++i) {
      ASSERT_LE(std::fabs(queued[i] - ordered[i]), tol) << "float " << i << " of " << used;
    }
  }
}

// ---- flash attention ----

struct AttnCase {
  int64_t d, heads, kv_heads, block_size;
};

// Sequences s = 0, 1, ... of one batch: count[s] tokens from position first[s] (count 1: a
// decoding token), block tables shuffled, keys limited to the last `window` (0: all), with a sink
// logit per head when `sinks` (ABI 1.6). Both backends store the same K/V (kv_store) into an F32
// or F16 cache.
void attention_case(const sy_backend_iface& onednn, const sy_backend_iface& ref, const AttnCase& c,
                    uint32_t kv_dtype, uint64_t seed, const std::vector<int32_t>& first,
                    const std::vector<int32_t>& count, uint32_t window = 0, bool sinks = false,
                    float softcap = 0.0f) {
  const int64_t width = c.d * c.kv_heads;
  int64_t max_len = 0;
  for (size_t s = 0; s < first.size(); ++s)
    max_len = std::max<int64_t>(max_len, first[s] + count[s]);
  const int64_t max_blocks = (max_len + c.block_size - 1) / c.block_size;
  const int64_t n_blocks = max_blocks * (int64_t)first.size(), n_slots = n_blocks * c.block_size;
  Rng rng(seed);
  std::vector<int32_t> perm(n_blocks);
  for (int64_t i = 0; i < n_blocks; ++i) perm[i] = (int32_t)i;
  for (int64_t i = n_blocks - 1; i > 0; --i) std::swap(perm[i], perm[rng.next() % (i + 1)]);
  std::vector<int32_t> tables(first.size() * max_blocks);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = perm[i];
  auto slot_of = [&](size_t s, int32_t p) {
    return tables[s * max_blocks + p / c.block_size] * (int32_t)c.block_size +
           p % (int32_t)c.block_size;
  };
  std::vector<int32_t> history, batch, pos;  // slots of cached positions; the batch's tokens
  std::vector<uint32_t> start = {0};
  for (size_t s = 0; s < first.size(); ++s) {
    for (int32_t p = 0; p < first[s]; ++p) history.push_back(slot_of(s, p));
    for (int32_t p = first[s]; p < first[s] + count[s]; ++p) {
      batch.push_back(slot_of(s, p));
      pos.push_back(p);
    }
    start.push_back((uint32_t)pos.size());
  }
  const int64_t T = (int64_t)pos.size();
  const auto kh = rng.vec(width * history.size()), vh = rng.vec(width * history.size());
  const auto kb = rng.vec(width * T), vb = rng.vec(width * T);
  const auto q = rng.vec(c.d * c.heads * T, -2.0f, 2.0f);
  const auto sink = rng.vec(c.heads, -3.0f, 3.0f);

  std::vector<float> out[2];
  std::vector<uint8_t> kcache[2];
  const uint64_t cache_bytes = n_slots * width * (kv_dtype == SY_DTYPE_F16 ? 2 : 4);
  for (int b = 0; b < 2; ++b) {
    Handle h(b ? ref : onednn);
    ASSERT_EQ(h.status(), SY_OK);
    const sy_tensor kc = Handle::tensor(kv_dtype, h.alloc(cache_bytes), 0, {width, n_slots});
    const sy_tensor vc = Handle::tensor(kv_dtype, h.alloc(cache_bytes), 0, {width, n_slots});
    auto store = [&](const std::vector<float>& k, const std::vector<float>& v,
                     const std::vector<int32_t>& slots) {
      sy_tensor tk = h.make(k, {width, (int64_t)slots.size()}),
                tv = h.make(v, {width, (int64_t)slots.size()});
      const sy_kv_store_args a{sizeof a, &tk, &tv, &kc, &vc, slots.data()};
      ASSERT_EQ(h.api().kv_store(h.get(), &a), SY_OK) << h.error();
    };
    store(kh, vh, history);
    store(kb, vb, batch);
    sy_tensor tq = h.make(q, {c.d, c.heads, T}), to = h.zeros({c.d, c.heads, T});
    sy_attention_args a{};
    a.struct_size = sizeof a;
    a.q = &tq, a.k_cache = &kc, a.v_cache = &vc, a.out = &to;
    a.n_kv_head = (uint32_t)c.kv_heads;
    a.n_seqs = (uint32_t)first.size();
    a.seq_token_start = start.data();
    a.token_pos = pos.data();
    a.block_tables = tables.data();
    a.max_blocks_per_seq = (uint32_t)max_blocks;
    a.block_size = (uint32_t)c.block_size;
    a.scale = 1.0f / std::sqrt((float)c.d);
    a.window = window;
    sy_tensor ts = h.make(sink, {c.heads});
    if (sinks) a.sinks = &ts;
    a.softcap = softcap;
    ASSERT_EQ(h.api().attention(h.get(), &a), SY_OK) << h.error();
    out[b] = h.read(to);
    kcache[b].resize(cache_bytes);
    ASSERT_EQ(h.api().buffer_read(h.get(), kc.buffer, 0, kcache[b].data(), cache_bytes), SY_OK);
  }
  // Slots no sequence uses hold whatever buffer_alloc left; compare the written ones.
  const int64_t eb = kv_dtype == SY_DTYPE_F16 ? 2 : 4;
  for (const auto* slots : {&history, &batch})
    for (int32_t s : *slots)
      ASSERT_EQ(std::memcmp(&kcache[0][s * width * eb], &kcache[1][s * width * eb], width * eb), 0)
          << "kv_store slot " << s;
  double worst = 0;  // max |v| is 1: rtol * 1 per element
  for (size_t i = 0; i < out[0].size(); ++i)
    worst = std::max(worst, std::fabs((double)out[0][i] - out[1][i]));
  EXPECT_LE(worst, kRtol) << "worst |onednn - ref| over " << out[0].size() << " outputs";
}

TEST_F(CpuKernels, FlashAttentionLongPromptsChunkedPrefillGqaF32AndF16Cache) {
  uint64_t seed = 50;
  for (uint32_t kv : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_F16})
    for (const AttnCase& c : {AttnCase{64, 12, 4, 16}, AttnCase{40, 8, 2, 5},
                              AttnCase{17, 3, 3, 16}, AttnCase{16, 64, 1, 16}}) {
      SCOPED_TRACE(std::string(sy::dtype::name(kv)) + " cache, head_dim " + std::to_string(c.d) +
                   ", heads " + std::to_string(c.heads) + "/" + std::to_string(c.kv_heads) +
                   ", block " + std::to_string(c.block_size));
      // A long prompt prefilled from position 0 in one call, a prefill chunk continuing 300
      // cached positions, a decode at position 1000 and one at position 0, and a chunk whose
      // last query tile (64 rows of heads) holds one token. With 64 query heads to a KV head,
      // a tile is one token: every query of a prompt takes the one-token (split-K) path.
      const int32_t tile = std::max<int32_t>(1, 64 / (int32_t)(c.heads / c.kv_heads));
      attention_case(*onednn_, *ref_, c, kv, seed++, {0, 300, 1000, 0, 200},
                     {700, 77, 1, 1, tile + 1});
    }
}

// Decode-only batches: one long context, whose keys the backend splits into spans on several
// threads and merges (split-K), and sequences of unequal lengths that share the spans' sizing.
TEST_F(CpuKernels, DecodeAttentionSplitsLongContextsAndMergesExactly) {
  uint64_t seed = 70;
  for (uint32_t kv : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_F16})
    for (const AttnCase& c :
         {AttnCase{64, 12, 4, 16}, AttnCase{40, 8, 2, 5}, AttnCase{17, 3, 3, 16},
          AttnCase{16, 4, 2, 16}, AttnCase{8, 4, 2, 16}})
      for (const auto& first : {std::vector<int32_t>{2047}, std::vector<int32_t>{0, 130, 2000, 511},
                                std::vector<int32_t>{3, 5, 70}}) {
        SCOPED_TRACE(std::string(sy::dtype::name(kv)) + " cache, head_dim " + std::to_string(c.d) +
                     ", " + std::to_string(first.size()) + " sequences");
        attention_case(*onednn_, *ref_, c, kv, seed++, first,
                       std::vector<int32_t>(first.size(), 1));
      }
}

// Both CPU backends report F16 caches (device_info, ABI 1.3) and refuse caches of two dtypes;
// a backend that reports none refuses an F16 cache in the op, naming the dtype.
TEST_F(CpuKernels, F16CachesAreReportedAndChecked) {
  const int64_t width = 8, slots = 4;
  const std::vector<int32_t> slot = {2};
  auto store = [&](Handle& h, uint32_t kdt, uint32_t vdt) {
    sy_tensor k = h.make(std::vector<float>(width, 1.0f), {width, 1});
    sy_tensor v = h.make(std::vector<float>(width, 1.0f), {width, 1});
    const sy_tensor kc = Handle::tensor(kdt, h.alloc(width * slots * 4), 0, {width, slots});
    const sy_tensor vc = Handle::tensor(vdt, h.alloc(width * slots * 4), 0, {width, slots});
    const sy_kv_store_args a{sizeof a, &k, &v, &kc, &vc, slot.data()};
    return h.api().kv_store(h.get(), &a);
  };
  for (const sy_backend_iface* api : {onednn_, ref_}) {
    Handle h(*api);
    EXPECT_EQ(h.info().kv_dtypes, (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16));
    EXPECT_EQ(store(h, SY_DTYPE_F16, SY_DTYPE_F16), SY_OK) << h.error();
    EXPECT_EQ(store(h, SY_DTYPE_F16, SY_DTYPE_F32), SY_ERR_INVALID_ARG);
    EXPECT_EQ(h.error(), "kv_store: v_cache has dtype F32 but k_cache has F16");
    EXPECT_EQ(store(h, SY_DTYPE_BF16, SY_DTYPE_BF16), SY_ERR_INVALID_ARG);
    EXPECT_EQ(h.error(), "kv_store: k_cache has dtype 30 (BF16), expected F32 (0) or F16 (1)");
  }
  LoadedPlugin f32_only(std::string(SWITCHYARD_TEST_PLUGIN_DIR) +
                        "/switchyard_backend_ref_no_hybrid.so");
  Handle h(f32_only.iface());
  EXPECT_EQ(h.info().kv_dtypes, 1ull << SY_DTYPE_F32);
  EXPECT_EQ(store(h, SY_DTYPE_F16, SY_DTYPE_F16), SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(), "kv_store: k_cache has dtype 1 (F16), expected F32 (0)");
}

// Sliding windows (ABI 1.5) of 1, 5, 16 and 300 keys: prompt tiles whose rows see different
// ranges (some longer than the window, some shorter), a chunk continuing a cache, decodes at
// positions 0 and 1000 and a long decode context (2047 keys), whose window's spans do not start
// at a span boundary.
TEST_F(CpuKernels, SlidingWindowPrefillTilesAndDecodeSpans) {
  uint64_t seed = 90;
  for (uint32_t kv : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_F16})
    for (const AttnCase& c : {AttnCase{64, 12, 4, 16}, AttnCase{17, 3, 3, 5}})
      for (uint32_t window : {1u, 5u, 16u, 300u}) {
        SCOPED_TRACE(std::string(sy::dtype::name(kv)) + " cache, head_dim " + std::to_string(c.d) +
                     ", window " + std::to_string(window));
        const int32_t tile = std::max<int32_t>(1, 64 / (int32_t)(c.heads / c.kv_heads));
        attention_case(*onednn_, *ref_, c, kv, seed++, {0, 300, 1000, 0, 200},
                       {400, 77, 1, 1, tile + 1}, window);
        attention_case(*onednn_, *ref_, c, kv, seed++, {2047, 0, 130, 2000, 511}, {1, 1, 1, 1, 1},
                       window);
      }
}

// The 1.6 members: gpt-oss's sinks, then Gemma 2's soft-cap (0.7, low enough to bend these
// scores; with a window, beside a sink, whose logit is not capped). Prompt tiles, a chunk
// continuing a cache, decodes (one split into spans over 2047 keys), with and without a window.
TEST_F(CpuKernels, AttentionSinksAndSoftcapOnTilesDecodesAndSpans) {
  uint64_t seed = 110;
  for (const float softcap : {0.0f, 0.7f})
    for (uint32_t kv : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_F16})
      for (const AttnCase& c : {AttnCase{64, 8, 2, 16}, AttnCase{17, 3, 3, 5}})
        for (uint32_t window : {0u, 5u}) {
          SCOPED_TRACE(std::string(sy::dtype::name(kv)) + " cache, head_dim " +
                       std::to_string(c.d) + ", window " + std::to_string(window) + ", softcap " +
                       std::to_string(softcap));
          const bool sinks = softcap == 0.0f || window != 0;
          attention_case(*onednn_, *ref_, c, kv, seed++, {0, 300, 1000, 0}, {200, 77, 1, 1}, window,
                         sinks, softcap);
          attention_case(*onednn_, *ref_, c, kv, seed++, {2047, 0, 130}, {1, 1, 1}, window, sinks,
                         softcap);
        }
}

// cpu_ref's soft-cap by hand: one head of one dim, keys of q k = 2 and 0 (v = 1 and 0), cap 1:
// out = e^tanh(2) / (e^tanh(2) + 1).
TEST_F(CpuKernels, RefAttentionSoftcapValue) {
  Handle h(*ref_);
  const std::vector<int32_t> table = {0}, pos = {1}, slots = {0, 1};
  const std::vector<uint32_t> start = {0, 1};
  sy_tensor tk = h.make(std::vector<float>{2.0f, 0.0f}, {1, 2}),
            tv = h.make(std::vector<float>{1.0f, 0.0f}, {1, 2});
  sy_tensor kc = h.zeros({1, 4}), vc = h.zeros({1, 4});
  const sy_kv_store_args st{sizeof st, &tk, &tv, &kc, &vc, slots.data()};
  ASSERT_EQ(h.api().kv_store(h.get(), &st), SY_OK) << h.error();
  sy_tensor tq = h.make(std::vector<float>{1.0f}, {1, 1, 1}), to = h.zeros({1, 1, 1});
  sy_attention_args a{};
  a.struct_size = sizeof a;
  a.q = &tq, a.k_cache = &kc, a.v_cache = &vc, a.out = &to, a.softcap = 1.0f;
  a.n_kv_head = 1, a.n_seqs = 1, a.seq_token_start = start.data(), a.token_pos = pos.data();
  a.block_tables = table.data(), a.max_blocks_per_seq = 1, a.block_size = 4, a.scale = 1.0f;
  ASSERT_EQ(h.api().attention(h.get(), &a), SY_OK) << h.error();
  EXPECT_NEAR(h.read(to)[0], 0.7239274686640463, 1e-7);
  a.softcap = -1.0f;
  EXPECT_EQ(h.api().attention(h.get(), &a), SY_ERR_INVALID_ARG);
  EXPECT_EQ(h.error(), "attention: softcap=-1 must be a positive finite number or 0");
  LoadedPlugin old(std::string(SWITCHYARD_TEST_PLUGIN_DIR) +
                   "/switchyard_backend_ref_no_hybrid.so");
  Handle o(old.iface());
  sy_tensor okc = o.zeros({1, 4}), ovc = o.zeros({1, 4});
  sy_tensor oq = o.make(std::vector<float>{1.0f}, {1, 1, 1}), oo = o.zeros({1, 1, 1});
  a.q = &oq, a.k_cache = &okc, a.v_cache = &ovc, a.out = &oo, a.softcap = 1.0f;
  EXPECT_EQ(o.api().attention(o.get(), &a), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(o.error(),
            "attention: attention logit soft-capping needs ABI 1.6, which ref_no_hybrid does not "
            "implement");
}

// cpu_ref's sink by hand: one head of one dim, one key (q k = 1, v = 2), sink 0:
// out = 2 e / (e + 1).
TEST_F(CpuKernels, RefAttentionSinkValue) {
  Handle h(*ref_);
  const std::vector<int32_t> table = {0}, pos = {0}, slot = {0};
  const std::vector<uint32_t> start = {0, 1};
  sy_tensor tk = h.make(std::vector<float>{1.0f}, {1, 1}),
            tv = h.make(std::vector<float>{2.0f}, {1, 1});
  sy_tensor kc = h.zeros({1, 4}), vc = h.zeros({1, 4});
  const sy_kv_store_args st{sizeof st, &tk, &tv, &kc, &vc, slot.data()};
  ASSERT_EQ(h.api().kv_store(h.get(), &st), SY_OK) << h.error();
  sy_tensor tq = h.make(std::vector<float>{1.0f}, {1, 1, 1}), to = h.zeros({1, 1, 1});
  sy_tensor ts = h.make(std::vector<float>{0.0f}, {1});
  sy_attention_args a{};
  a.struct_size = sizeof a;
  a.q = &tq, a.k_cache = &kc, a.v_cache = &vc, a.out = &to, a.sinks = &ts;
  a.n_kv_head = 1, a.n_seqs = 1, a.seq_token_start = start.data(), a.token_pos = pos.data();
  a.block_tables = table.data(), a.max_blocks_per_seq = 1, a.block_size = 4, a.scale = 1.0f;
  ASSERT_EQ(h.api().attention(h.get(), &a), SY_OK) << h.error();
  EXPECT_NEAR(h.read(to)[0], 1.4621171572600098, 1e-7);
}

// Refusals with their exact messages: sinks of the wrong length, sinks on a plugin that does not
// speak 1.6 (ref_no_hybrid), a unary kind past the 1.6 ones.
TEST_F(CpuKernels, SinksAndUnaryKindsRefused) {
  const std::vector<int32_t> table = {0}, pos = {0}, slot = {0};
  const std::vector<uint32_t> start = {0, 1};
  auto attend = [&](Handle& h, int64_t n_sinks) {
    sy_tensor kc = h.zeros({4, 4}), vc = h.zeros({4, 4});
    sy_tensor tq = h.make(std::vector<float>(8, 1.0f), {2, 4, 1}), to = h.zeros({2, 4, 1});
    sy_tensor ts = h.make(std::vector<float>(n_sinks, 0.0f), {n_sinks});
    sy_attention_args a{};
    a.struct_size = sizeof a;
    a.q = &tq, a.k_cache = &kc, a.v_cache = &vc, a.out = &to, a.sinks = &ts;
    a.n_kv_head = 2, a.n_seqs = 1, a.seq_token_start = start.data(), a.token_pos = pos.data();
    a.block_tables = table.data(), a.max_blocks_per_seq = 1, a.block_size = 4, a.scale = 1.0f;
    return h.api().attention(h.get(), &a);
  };
  Handle ref(*ref_);
  EXPECT_EQ(attend(ref, 3), SY_ERR_INVALID_ARG);
  EXPECT_EQ(ref.error(), "attention: sinks has ne[0]=3 but q has 4 heads");
  sy_tensor tx = ref.zeros({4});
  const sy_unary_args u{sizeof u, SY_UNARY_TANH + 1, &tx, &tx};
  EXPECT_EQ(ref.api().unary(ref.get(), &u), SY_ERR_INVALID_ARG);
  EXPECT_EQ(ref.error(), "unary: kind 4 is not a sy_unary_kind");
  LoadedPlugin old(std::string(SWITCHYARD_TEST_PLUGIN_DIR) +
                   "/switchyard_backend_ref_no_hybrid.so");
  Handle h(old.iface());
  EXPECT_EQ(attend(h, 4), SY_ERR_UNSUPPORTED);
  EXPECT_EQ(h.error(),
            "attention: attention sinks need ABI 1.6, which ref_no_hybrid does not "
            "implement");
}

// gpt-oss's clamped SwiGLU against cpu_ref: gates and ups past both limits, a tail, the pool,
// in place on either input.
TEST_F(CpuKernels, SwigluOai) {
  uint64_t seed = 130;
  for (int64_t n : {7, 45, 70001})
    for (int alias : {0, 1, 2}) {
      SCOPED_TRACE("n " + std::to_string(n) + " alias " + std::to_string(alias));
      Rng rng(seed++);
      const std::vector<float> g = rng.vec(n, -12.0f, 12.0f), u = rng.vec(n, -12.0f, 12.0f);
      std::vector<float> out[2];
      for (int be = 0; be < 2; ++be) {
        Handle h(be ? *ref_ : *onednn_);
        sy_tensor tg = h.make(g, {n}), tu = h.make(u, {n});
        sy_tensor ty = alias == 1 ? tg : alias == 2 ? tu : h.zeros({n});
        const sy_swiglu_oai_args a{sizeof a, 0, &tg, &tu, &ty, 1.702f, 7.0f};
        ASSERT_EQ(h.api().swiglu_oai(h.get(), &a), SY_OK) << h.error();
        out[be] = h.read(ty);
      }
      EXPECT_TRUE(sy::test::close(out[0], out[1], sy::test::abs_of(out[1]), kRtol, 1e-30));
    }
  // By hand: g = 10 clamps to 7, u = -10 to -7: 7 sigmoid(1.702 * 7) * (-6).
  Handle h(*ref_);
  sy_tensor tg = h.make(std::vector<float>{10.0f}, {1}),
            tu = h.make(std::vector<float>{-10.0f}, {1});
  sy_tensor ty = h.zeros({1});
  const sy_swiglu_oai_args a{sizeof a, 0, &tg, &tu, &ty, 1.702f, 7.0f};
  ASSERT_EQ(h.api().swiglu_oai(h.get(), &a), SY_OK) << h.error();
  EXPECT_NEAR(h.read(ty)[0], -41.99971876981991, 1e-4);
}

// ---- the 1.5 recurrences ----

// A batch: sequence s has count[s] tokens and state slot n_slots - 1 - s (slot 0 untouched).
struct SeqBatch {
  std::vector<uint32_t> start = {0};
  std::vector<int32_t> slots;
  int64_t n_slots = 0;
};
SeqBatch seq_batch(const std::vector<uint32_t>& count) {
  SeqBatch b;
  b.n_slots = (int64_t)count.size() + 1;
  for (size_t s = 0; s < count.size(); ++s) {
    b.start.push_back(b.start.back() + count[s]);
    b.slots.push_back((int32_t)(b.n_slots - 1 - (int64_t)s));
  }
  return b;
}

// Columns `tokens` of a {width, T} matrix, in that order.
std::vector<float> columns(const std::vector<float>& v, int64_t width,
                           const std::vector<int64_t>& tokens) {
  std::vector<float> out;
  for (int64_t t : tokens)
    out.insert(out.end(), v.begin() + t * width, v.begin() + (t + 1) * width);
  return out;
}

// The batch split into two calls: each sequence's first `first[s]` tokens, then the rest. Returns
// the two batches and their tokens' indices in the whole batch.
struct Split {
  SeqBatch part[2];
  std::vector<int64_t> tokens[2];
};
Split split(const SeqBatch& b, const std::vector<uint32_t>& first) {
  Split sp;
  for (int k = 0; k < 2; ++k) sp.part[k].n_slots = b.n_slots, sp.part[k].slots = b.slots;
  for (size_t s = 0; s + 1 < b.start.size(); ++s) {
    const uint32_t mid = std::min(b.start[s] + first[s], b.start[s + 1]);
    for (int k = 0; k < 2; ++k) {
      const uint32_t t0 = k ? mid : b.start[s], t1 = k ? b.start[s + 1] : mid;
      for (uint32_t t = t0; t < t1; ++t) sp.tokens[k].push_back(t);
      sp.part[k].start.push_back((uint32_t)sp.tokens[k].size());
    }
  }
  return sp;
}

double softplus(double v) {
  return v > 20.0 ? v : std::log1p(std::exp(v));
}
double silu(double v) {
  return v / (1.0 + std::exp(-v));
}

// Results of one call; the state in and out.
struct RecResult {
  std::vector<float> y, state;
};

// ---- ssm_scan2 ----

struct Ssm2Case {
  int64_t d_state, head_dim, heads, groups;
  bool bias, skip, gate;
};
struct Ssm2Data {
  Ssm2Case c;
  std::vector<float> xbc, dt, dt_bias, a, d, z, state;
  int64_t d_inner() const { return c.head_dim * c.heads; }
  int64_t width() const { return d_inner() + 2 * c.groups * c.d_state; }
};

Ssm2Data ssm2_data(const Ssm2Case& c, int64_t T, int64_t n_slots, uint64_t seed) {
  Rng rng(seed);
  Ssm2Data in;
  in.c = c;
  in.xbc = rng.vec(in.width() * T, -1.5f, 1.5f);
  in.dt = rng.vec(c.heads * T, -4.0f, 3.0f);
  if (!in.dt.empty()) in.dt[0] = 25.0f;  // softplus(v) = v above 20
  in.dt_bias = rng.vec(c.heads);
  for (float v : rng.vec(c.heads)) in.a.push_back(-std::exp(v));
  in.d = rng.vec(c.heads);
  in.z = rng.vec(in.d_inner() * T, -3.0f, 3.0f);
  in.state = rng.vec(c.d_state * in.d_inner() * n_slots);
  return in;
}

// ssm_scan2 over the batch's tokens (columns `tokens` of the data), from `state`.
RecResult run_ssm2(const sy_backend_iface& api, const std::vector<sy_param>& params,
                   const Ssm2Data& in, const SeqBatch& b, const std::vector<int64_t>& tokens,
                   const std::vector<float>& state) {
  const Ssm2Case& c = in.c;
  const int64_t D = in.d_inner(), T = (int64_t)tokens.size();
  Handle h(api, params);
  EXPECT_EQ(h.status(), SY_OK);
  sy_tensor xbc = h.make(columns(in.xbc, in.width(), tokens), {in.width(), T});
  sy_tensor dt = h.make(columns(in.dt, c.heads, tokens), {c.heads, T});
  sy_tensor bias = h.make(in.dt_bias, {c.heads}), a = h.make(in.a, {c.heads});
  sy_tensor d = h.make(in.d, {c.heads}), z = h.make(columns(in.z, D, tokens), {D, T});
  sy_tensor st = h.make(state, {c.d_state, D, b.n_slots}), y = h.zeros({D, T});
  sy_ssm_scan2_args args{};
  args.struct_size = sizeof args;
  args.n_seqs = (uint32_t)b.slots.size();
  args.xbc = &xbc, args.dt = &dt, args.a = &a, args.state = &st, args.y = &y;
  args.dt_bias = c.bias ? &bias : nullptr;
  args.d = c.skip ? &d : nullptr;
  args.z = c.gate ? &z : nullptr;
  args.seq_token_start = b.start.data();
  args.state_slots = b.slots.data();
  EXPECT_EQ(h.api().ssm_scan2(h.get(), &args), SY_OK) << h.error();
  return {h.read(y), h.read(st)};
}

// The scale of each result's rounding error: the recurrence on magnitudes (|state| decays as the
// state does and gains |B x dt|), then y's sum of |s C|, the skip and the gate.
void ssm2_magnitudes(const Ssm2Data& in, const SeqBatch& b, std::vector<double>& ymag,
                     std::vector<double>& smag) {
  const Ssm2Case& c = in.c;
  const int64_t D = in.d_inner(), S = c.d_state, P = c.head_dim, W = in.width();
  smag.assign(in.state.begin(), in.state.end());
  for (double& v : smag) v = std::fabs(v);
  ymag.assign(D * b.start.back(), 0.0);
  for (size_t s = 0; s < b.slots.size(); ++s)
    for (uint32_t t = b.start[s]; t < b.start[s + 1]; ++t)
      for (int64_t h = 0; h < c.heads; ++h) {
        const int64_t g = h / (c.heads / c.groups);
        const double delta = softplus(in.dt[t * c.heads + h] + (c.bias ? in.dt_bias[h] : 0.0));
        const double da = std::exp(delta * in.a[h]);
        for (int64_t i = h * P; i < (h + 1) * P; ++i) {
          const double x = in.xbc[t * W + i];
          double m = 0;
          for (int64_t n = 0; n < S; ++n) {
            double& sm = smag[(b.slots[s] * D + i) * S + n];
            sm = sm * da + std::fabs(in.xbc[t * W + D + g * S + n] * x * delta);
            m += sm * std::fabs(in.xbc[t * W + D + (c.groups + g) * S + n]);
          }
          if (c.skip) m += std::fabs(in.d[h] * x);
          if (c.gate) m *= std::fabs(silu(in.z[t * D + i])) + 1.0;
          ymag[t * D + i] = m;
        }
      }
}

// |got - ref| <= kRtol * mag per element (onednn against cpu_ref).
::testing::AssertionResult within_mag(const std::vector<float>& got, const std::vector<float>& ref,
                                      const std::vector<double>& mag) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs((double)got[i] - ref[i]) <= kRtol * mag[i]))
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": got "
                                           << got[i] << ", ref " << ref[i] << ", mag " << mag[i];
  return ::testing::AssertionSuccess();
}

// d_state of a vector and a tail, below one vector and many; head_dim 3 and 64; 1 to 6 heads in
// 1 to 3 groups; with and without dt_bias, D and z. Sequences of 4, 0, 1 and 9 tokens in one call
// (a prefill chunk, none, a decode), on one thread and split over three.
TEST_F(CpuKernels, SsmScan2MatchesTheReferenceOddSizes) {
  const std::vector<Ssm2Case> cases = {
      {1, 3, 1, 1, true, true, true},     {5, 64, 2, 1, false, false, false},
      {16, 3, 6, 3, true, false, true},   {17, 64, 4, 2, true, true, false},
      {128, 64, 3, 3, false, true, true}, {128, 3, 6, 2, true, true, true},
  };
  const SeqBatch b = seq_batch({4, 0, 1, 9});
  std::vector<int64_t> all(b.start.back());
  for (int64_t t = 0; t < (int64_t)all.size(); ++t) all[t] = t;
  uint64_t seed = 500;
  for (const char* threads : {"1", "3"})
    for (const Ssm2Case& c : cases) {
      SCOPED_TRACE("d_state " + std::to_string(c.d_state) + ", head_dim " +
                   std::to_string(c.head_dim) + ", heads " + std::to_string(c.heads) + "/" +
                   std::to_string(c.groups) + ", threads " + threads);
      const Ssm2Data in = ssm2_data(c, (int64_t)all.size(), b.n_slots, seed++);
      const RecResult got = run_ssm2(*onednn_, {{"threads", threads}}, in, b, all, in.state);
      const RecResult ref = run_ssm2(*ref_, {}, in, b, all, in.state);
      std::vector<double> ymag, smag;
      ssm2_magnitudes(in, b, ymag, smag);
      EXPECT_TRUE(within_mag(got.y, ref.y, ymag)) << "y";
      EXPECT_TRUE(within_mag(got.state, ref.state, smag)) << "state";
    }
}

// A chunk computed in two calls, the state carried between them, equals one call bit for bit.
TEST_F(CpuKernels, SsmScan2StateCarriedAcrossCallsEqualsOneCall) {
  const Ssm2Case c{17, 64, 4, 2, true, true, true};
  const SeqBatch b = seq_batch({6, 1, 0, 5});
  std::vector<int64_t> all(b.start.back());
  for (int64_t t = 0; t < (int64_t)all.size(); ++t) all[t] = t;
  const Ssm2Data in = ssm2_data(c, (int64_t)all.size(), b.n_slots, 77);
  const RecResult one = run_ssm2(*onednn_, {}, in, b, all, in.state);
  const Split sp = split(b, {2, 1, 0, 4});
  const RecResult first = run_ssm2(*onednn_, {}, in, sp.part[0], sp.tokens[0], in.state);
  const RecResult second = run_ssm2(*onednn_, {}, in, sp.part[1], sp.tokens[1], first.state);
  EXPECT_EQ(second.state, one.state);
  const int64_t D = in.d_inner();
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < sp.tokens[k].size(); ++i) {
      const std::vector<float>& y = k ? second.y : first.y;
      EXPECT_TRUE(std::equal(y.begin() + i * D, y.begin() + (i + 1) * D,
                             one.y.begin() + sp.tokens[k][i] * D))
          << "token " << sp.tokens[k][i];
    }
}

// ---- gated_delta_net ----

struct GdnCase {
  int64_t S, k_heads, v_heads;
  uint32_t head_map;
};
struct GdnData {
  GdnCase c;
  std::vector<float> qkv, alpha, beta, dt_bias, a, state;
  int64_t width() const { return (2 * c.k_heads + c.v_heads) * c.S; }
};

GdnData gdn_data(const GdnCase& c, int64_t T, int64_t n_slots, uint64_t seed) {
  Rng rng(seed);
  GdnData in;
  in.c = c;
  in.qkv = rng.vec(in.width() * T);
  if (T > 0) std::fill(in.qkv.begin(), in.qkv.begin() + c.S, 0.0f);  // a zero q: the eps floor
  in.alpha = rng.vec(c.v_heads * T, -3.0f, 3.0f);
  in.beta = rng.vec(c.v_heads * T, -4.0f, 4.0f);
  in.dt_bias = rng.vec(c.v_heads);
  for (float v : rng.vec(c.v_heads, -2.0f, 1.0f)) in.a.push_back(-std::exp(v));
  in.state = rng.vec(c.S * c.S * c.v_heads * n_slots, -0.5f, 0.5f);
  return in;
}

constexpr float kGdnEps = 1e-6f;

RecResult run_gdn(const sy_backend_iface& api, const std::vector<sy_param>& params,
                  const GdnData& in, const SeqBatch& b, const std::vector<int64_t>& tokens,
                  const std::vector<float>& state) {
  const GdnCase& c = in.c;
  const int64_t T = (int64_t)tokens.size();
  Handle h(api, params);
  EXPECT_EQ(h.status(), SY_OK);
  sy_tensor qkv = h.make(columns(in.qkv, in.width(), tokens), {in.width(), T});
  sy_tensor alpha = h.make(columns(in.alpha, c.v_heads, tokens), {c.v_heads, T});
  sy_tensor beta = h.make(columns(in.beta, c.v_heads, tokens), {c.v_heads, T});
  sy_tensor bias = h.make(in.dt_bias, {c.v_heads}), a = h.make(in.a, {c.v_heads});
  sy_tensor st = h.make(state, {c.S, c.S, c.v_heads, b.n_slots});
  sy_tensor y = h.zeros({c.S, c.v_heads, T});
  sy_gated_delta_net_args args{};
  args.struct_size = sizeof args;
  args.n_seqs = (uint32_t)b.slots.size();
  args.qkv = &qkv, args.alpha = &alpha, args.beta = &beta, args.dt_bias = &bias, args.a = &a;
  args.state = &st, args.y = &y;
  args.seq_token_start = b.start.data();
  args.state_slots = b.slots.data();
  args.head_map = c.head_map;
  args.eps = kGdnEps;
  EXPECT_EQ(h.api().gated_delta_net(h.get(), &args), SY_OK) << h.error();
  return {h.read(y), h.read(st)};
}

// The recurrence on magnitudes: |M| decays and gains |k| |u|, |u| is beta (|v| + decay |M|.|k|),
// |y| is |M|.|q| / sqrt(S) (q and k normalised as the op does).
void gdn_magnitudes(const GdnData& in, const SeqBatch& b, std::vector<double>& ymag,
                    std::vector<double>& smag) {
  const GdnCase& c = in.c;
  const int64_t S = c.S, HK = c.k_heads, HV = c.v_heads, W = in.width();
  smag.assign(in.state.begin(), in.state.end());
  for (double& v : smag) v = std::fabs(v);
  ymag.assign(S * HV * b.start.back(), 0.0);
  std::vector<double> q(S), k(S), u(S);
  auto l2 = [&](const float* v, std::vector<double>& out) {
    double ss = 0;
    for (int64_t i = 0; i < S; ++i) ss += (double)v[i] * v[i];
    const double inv = 1.0 / std::max(std::sqrt(ss), (double)kGdnEps);
    for (int64_t i = 0; i < S; ++i) out[i] = std::fabs(v[i] * inv);
  };
  for (size_t s = 0; s < b.slots.size(); ++s)
    for (uint32_t t = b.start[s]; t < b.start[s + 1]; ++t)
      for (int64_t j = 0; j < HV; ++j) {
        const int64_t m = c.head_map == SY_GDN_HEADS_MODULO ? j % HK : j / (HV / HK);
        l2(&in.qkv[t * W + m * S], q);
        l2(&in.qkv[t * W + (HK + m) * S], k);
        const double decay = std::exp(softplus(in.alpha[t * HV + j] + in.dt_bias[j]) * in.a[j]);
        const double beta = 1.0 / (1.0 + std::exp(-(double)in.beta[t * HV + j]));
        double* M = &smag[(b.slots[s] * HV + j) * S * S];
        for (int64_t col = 0; col < S; ++col) {
          double dot = 0;
          for (int64_t i = 0; i < S; ++i) dot += M[col * S + i] * k[i];
          u[col] = beta * (std::fabs(in.qkv[t * W + (2 * HK + j) * S + col]) + decay * dot);
          double yq = 0;
          for (int64_t i = 0; i < S; ++i) {
            M[col * S + i] = M[col * S + i] * decay + k[i] * u[col];
            yq += M[col * S + i] * q[i];
          }
          ymag[(t * HV + j) * S + col] = yq / std::sqrt((double)S);
        }
      }
}

// S of one value, below one vector, whole vectors and a tail, and Qwen's 128; as many key heads
// as value heads and fewer, both head maps. Sequences of 3, 0, 1 and 6 tokens in one call, on one
// thread and three.
TEST_F(CpuKernels, GatedDeltaNetMatchesTheReferenceOddSizes) {
  const std::vector<GdnCase> cases = {
      {1, 1, 1, SY_GDN_HEADS_MODULO},   {7, 2, 6, SY_GDN_HEADS_MODULO},
      {7, 2, 6, SY_GDN_HEADS_BLOCKED},  {32, 3, 3, SY_GDN_HEADS_BLOCKED},
      {33, 1, 4, SY_GDN_HEADS_MODULO},  {33, 2, 4, SY_GDN_HEADS_BLOCKED},
      {128, 2, 4, SY_GDN_HEADS_MODULO}, {128, 2, 4, SY_GDN_HEADS_BLOCKED},
  };
  const SeqBatch b = seq_batch({3, 0, 1, 6});
  std::vector<int64_t> all(b.start.back());
  for (int64_t t = 0; t < (int64_t)all.size(); ++t) all[t] = t;
  uint64_t seed = 600;
  for (const char* threads : {"1", "3"})
    for (const GdnCase& c : cases) {
      SCOPED_TRACE("S " + std::to_string(c.S) + ", heads " + std::to_string(c.k_heads) + "/" +
                   std::to_string(c.v_heads) +
                   (c.head_map == SY_GDN_HEADS_MODULO ? " modulo" : " blocked") + ", threads " +
                   threads);
      const GdnData in = gdn_data(c, (int64_t)all.size(), b.n_slots, seed++);
      const RecResult got = run_gdn(*onednn_, {{"threads", threads}}, in, b, all, in.state);
      const RecResult ref = run_gdn(*ref_, {}, in, b, all, in.state);
      std::vector<double> ymag, smag;
      gdn_magnitudes(in, b, ymag, smag);
      EXPECT_TRUE(within_mag(got.y, ref.y, ymag)) << "y";
      EXPECT_TRUE(within_mag(got.state, ref.state, smag)) << "state";
    }
}

TEST_F(CpuKernels, GatedDeltaNetStateCarriedAcrossCallsEqualsOneCall) {
  const GdnCase c{33, 2, 4, SY_GDN_HEADS_BLOCKED};
  const SeqBatch b = seq_batch({5, 2, 0, 1});
  std::vector<int64_t> all(b.start.back());
  for (int64_t t = 0; t < (int64_t)all.size(); ++t) all[t] = t;
  const GdnData in = gdn_data(c, (int64_t)all.size(), b.n_slots, 88);
  const RecResult one = run_gdn(*onednn_, {}, in, b, all, in.state);
  const Split sp = split(b, {3, 1, 0, 0});
  const RecResult first = run_gdn(*onednn_, {}, in, sp.part[0], sp.tokens[0], in.state);
  const RecResult second = run_gdn(*onednn_, {}, in, sp.part[1], sp.tokens[1], first.state);
  EXPECT_EQ(second.state, one.state);
  const int64_t w = c.S * c.v_heads;
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < sp.tokens[k].size(); ++i) {
      const std::vector<float>& y = k ? second.y : first.y;
      EXPECT_TRUE(std::equal(y.begin() + i * w, y.begin() + (i + 1) * w,
                             one.y.begin() + sp.tokens[k][i] * w))
          << "token " << sp.tokens[k][i];
    }
}

// ---- norm, mul, unary ----

// Rows of 1, 7 and 33 values (below a vector, a tail) and 257 x 300 (the pool's rows), RMS and
// L2, without a weight, with one column and with 3 groups; in place and out of place.
TEST_F(CpuKernels, NormRmsAndL2GroupsAndInPlace) {
  uint64_t seed = 700;
  for (const auto& [n, rows] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 6}, {7, 3}, {33, 9}, {257, 300}})
    for (uint32_t kind : {(uint32_t)SY_NORM_RMS, (uint32_t)SY_NORM_L2})
      for (int64_t groups : {0, 1, 3})
        for (bool in_place : {false, true}) {
          SCOPED_TRACE("n " + std::to_string(n) + " rows " + std::to_string(rows) + " kind " +
                       std::to_string(kind) + " groups " + std::to_string(groups) +
                       (in_place ? " in place" : ""));
          Rng rng(seed++);
          const std::vector<float> x = rng.vec(n * rows, -3.0f, 3.0f),
                                   w = rng.vec(n * std::max<int64_t>(groups, 1));
          std::vector<float> out[2];
          for (int be = 0; be < 2; ++be) {
            Handle h(be ? *ref_ : *onednn_);
            sy_tensor tx = h.make(x, {n, rows}), tw = h.make(w, {n, groups}),
                      ty = in_place ? tx : h.zeros({n, rows});
            const sy_norm_args a{sizeof a, kind, &tx, groups ? &tw : nullptr, &ty, 1e-5f, 0};
            ASSERT_EQ(h.api().norm(h.get(), &a), SY_OK) << h.error();
            out[be] = h.read(ty);
          }
          EXPECT_TRUE(sy::test::close(out[0], out[1], sy::test::abs_of(out[1]), kRtol));
        }
}

// Same shapes and one value per row, odd sizes, in place over a or b.
TEST_F(CpuKernels, MulSameShapeAndRowBroadcast) {
  uint64_t seed = 800;
  for (const auto& [n, rows] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 5}, {7, 3}, {37, 11}, {1031, 70}})
    for (bool broadcast : {false, true})
      for (int alias : {0, 1, 2}) {  // y is a new tensor, a, or b
        if (alias == 2 && broadcast) continue;
        SCOPED_TRACE("n " + std::to_string(n) + " rows " + std::to_string(rows) +
                     (broadcast ? " broadcast" : "") + " alias " + std::to_string(alias));
        Rng rng(seed++);
        const int64_t bn = broadcast ? 1 : n;
        const std::vector<float> a = rng.vec(n * rows, -4.0f, 4.0f), b = rng.vec(bn * rows);
        std::vector<float> out[2];
        for (int be = 0; be < 2; ++be) {
          Handle h(be ? *ref_ : *onednn_);
          sy_tensor ta = h.make(a, {n, rows}), tb = h.make(b, {bn, rows});
          sy_tensor ty = alias == 1 ? ta : alias == 2 ? tb : h.zeros({n, rows});
          ASSERT_EQ(h.api().mul(h.get(), &ta, &tb, &ty), SY_OK) << h.error();
          out[be] = h.read(ty);
        }
        EXPECT_EQ(out[0], out[1]);  // one F32 product each: exact
      }
}

// Every unary kind (sigmoid and GELU saturating at both ends, relu^2, tanh near 0 and saturated)
// over sizes below a vector, with a tail and large enough for the pool; in place.
TEST_F(CpuKernels, UnaryKinds) {
  uint64_t seed = 900;
  for (uint32_t kind : {(uint32_t)SY_UNARY_SIGMOID, (uint32_t)SY_UNARY_RELU_SQR,
                        (uint32_t)SY_UNARY_GELU, (uint32_t)SY_UNARY_TANH})
    for (int64_t n : {1, 7, 45, 70001})
      for (bool in_place : {false, true}) {
        SCOPED_TRACE("kind " + std::to_string(kind) + " n " + std::to_string(n) +
                     (in_place ? " in place" : ""));
        Rng rng(seed++);
        std::vector<float> x = rng.vec(n, -12.0f, 12.0f);
        for (int64_t i = 0; i < n; i += 13) x[i] = i % 2 ? 120.0f : -120.0f;
        for (int64_t i = 5; i < n; i += 17) x[i] *= 1e-3f;  // tanh's series range
        std::vector<float> out[2];
        for (int be = 0; be < 2; ++be) {
          Handle h(be ? *ref_ : *onednn_);
          sy_tensor tx = h.make(x, {n}), ty = in_place ? tx : h.zeros({n});
          const sy_unary_args a{sizeof a, kind, &tx, &ty};
          ASSERT_EQ(h.api().unary(h.get(), &a), SY_OK) << h.error();
          out[be] = h.read(ty);
        }
        // sigmoid(-120) is a subnormal cpu_ref keeps and the vector exp flushes: an absolute
        // floor far below any normal value.
        EXPECT_TRUE(sy::test::close(out[0], out[1], sy::test::abs_of(out[1]), kRtol, 1e-37));
      }
}

// cpu_ref's GELU (tanh approximation) and tanh against Python's math in double:
// gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
TEST_F(CpuKernels, UnaryGeluAndTanhValues) {
  const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};
  const std::vector<double> gelu = {-0.0036373920817729943, -0.15880800939172324,
                                    -0.15428599017485606,   0.0,
                                    0.34571400982514394,    0.8411919906082768,
                                    2.996362607918227},
                            tanh = {
                                -0.9950547536867305, -0.7615941559557649, -0.46211715726000974, 0.0,
                                0.46211715726000974, 0.7615941559557649,  0.9950547536867305};
  for (uint32_t kind : {(uint32_t)SY_UNARY_GELU, (uint32_t)SY_UNARY_TANH}) {
    Handle h(*ref_);
    sy_tensor tx = h.make(x, {(int64_t)x.size()}), ty = h.zeros({(int64_t)x.size()});
    const sy_unary_args a{sizeof a, kind, &tx, &ty};
    ASSERT_EQ(h.api().unary(h.get(), &a), SY_OK) << h.error();
    const std::vector<float> y = h.read(ty);
    const std::vector<double>& want = kind == SY_UNARY_GELU ? gelu : tanh;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-7) << "x " << x[i];
  }
}

// ---- MoE (1.5) ----

// Sigmoid and softmax routing with and without a selection bias: logits and biases from small
// sets of values, so scores tie (the lower id first); the ids must equal cpu_ref's and the weights
// (the unbiased probabilities) agree to rounding. 600 tokens of 64 experts take the pool.
TEST_F(CpuKernels, MoeGateSigmoidAndSelectionBiasPickLikeTheReference) {
  uint64_t seed = 1000;
  for (uint32_t gating : {(uint32_t)SY_MOE_GATING_SIGMOID, (uint32_t)SY_MOE_GATING_SOFTMAX})
    for (bool biased : {false, true})
      for (const auto& [E, k, T] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {8, 1, 5}, {8, 3, 7}, {64, 6, 600}, {5, 5, 3}})
        for (bool normalize : {false, true}) {
          SCOPED_TRACE("gating " + std::to_string(gating) + (biased ? " biased" : "") + " E " +
                       std::to_string(E) + " k " + std::to_string(k) + " T " + std::to_string(T) +
                       (normalize ? " normalized" : ""));
          Rng rng(seed++);
          std::vector<float> logits(E * T), bias(E);
          for (float& v : logits) v = 0.5f * (float)(rng.next() % 9) - 2.0f;
          for (float& v : bias) v = 0.25f * (float)(rng.next() % 3) - 0.25f;
          std::vector<int32_t> ids[2];
          std::vector<float> weights[2];
          for (int be = 0; be < 2; ++be) {
            Handle h(be ? *ref_ : *onednn_);
            sy_tensor tl = h.make(logits, {E, T}), tb = h.make(bias, {E});
            sy_tensor ti = h.zeros({k, T}, SY_DTYPE_I32), tw = h.zeros({k, T});
            sy_moe_gate_args a{};
            a.struct_size = sizeof a;
            a.gating = gating;
            a.logits = &tl, a.ids = &ti, a.weights = &tw;
            a.normalize = normalize;
            a.scale = 2.5f;
            a.selection_bias = biased ? &tb : nullptr;
            ASSERT_EQ(h.api().moe_gate(h.get(), &a), SY_OK) << h.error();
            ids[be] = h.read<int32_t>(ti);
            weights[be] = h.read(tw);
          }
          EXPECT_EQ(ids[0], ids[1]);
          EXPECT_TRUE(sy::test::close(weights[0], weights[1], sy::test::abs_of(weights[1]), 1e-6));
        }
}

// Gate and up halves of one fused {K, 2N, n_expert} tensor (expert_stride = 2N rows), each with
// its own bias and scale, in F32, Q8_0 and Q4_K; decode, a small batch and a prefill-sized one
// (the GEMV and the GEMM); the input shared by the slots and one per slot.
TEST_F(CpuKernels, MoeMatmulFusedGateUpStrideBiasAndScale) {
  const int64_t n_expert = 4, k = 2, N = 19;
  uint64_t seed = 1100;
  for (uint32_t dtype : {SY_DTYPE_F32, SY_DTYPE_Q8_0, SY_DTYPE_Q4_K})
    for (int64_t T : {1, 7, 60})
      for (int64_t xs : {int64_t(1), k}) {
        SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " tokens " + std::to_string(T) +
                     " x slots " + std::to_string(xs));
        const int64_t K = is_float(dtype) ? 37 : 2 * sy::dtype::block_elems(dtype);
        Rng rng(seed++);
        const std::vector<float> x = rng.vec(K * xs * T, -2.0f, 2.0f),
                                 wf = rng.vec(K * 2 * N * n_expert);
        const int64_t rb = sy::dtype::row_bytes(dtype, K);
        std::vector<uint8_t> wq(rb * 2 * N * n_expert);
        std::vector<float> w(wf.size());  // what both multiply by
        for (int64_t j = 0; j < 2 * N * n_expert; ++j) {
          sy::dtype::row_from_f32(dtype, &wf[j * K], &wq[j * rb], K);
          sy::dtype::row_to_f32(dtype, &wq[j * rb], &w[j * K], K);
        }
        const std::vector<float> bias = rng.vec(N * n_expert),
                                 scale = rng.vec(n_expert, 0.5f, 2.0f);
        std::vector<int32_t> ids(k * T);
        for (int64_t t = 0; t < T; ++t) {
          ids[t * k] = (int32_t)(rng.next() % n_expert);
          ids[t * k + 1] = (int32_t)((ids[t * k] + 1 + rng.next() % (n_expert - 1)) % n_expert);
        }
        for (int half = 0; half < 2; ++half) {
          SCOPED_TRACE(half ? "up" : "gate");
          std::vector<float> out[2];
          for (int be = 0; be < 2; ++be) {
            Handle h(be ? *ref_ : *onednn_);
            const sy_buffer_t wb = h.upload(wq.data(), wq.size());
            const sy_tensor tw = Handle::tensor(dtype, wb, half * N * rb, {K, N, n_expert});
            sy_tensor tx = h.make(x, {K, xs, T}), ti = h.make(ids, {k, T}, SY_DTYPE_I32);
            sy_tensor tb = h.make(bias, {N, n_expert}), ts = h.make(scale, {n_expert});
            sy_tensor ty = h.zeros({N, k, T});
            sy_moe_matmul_args a{};
            a.struct_size = sizeof a;
            a.x = &tx, a.w = &tw, a.ids = &ti, a.y = &ty;
            a.expert_stride = 2 * N * rb;
            a.bias = &tb, a.scale = &ts;
            ASSERT_EQ(h.api().moe_matmul(h.get(), &a), SY_OK) << h.error();
            out[be] = h.read(ty);
          }
          for (int64_t t = 0; t < T; ++t)
            for (int64_t j = 0; j < k; ++j)
              for (int64_t c = 0; c < N; ++c) {
                const int64_t e = ids[t * k + j];
                const float* wr = &w[((e * 2 + half) * N + c) * K];
                const float* xr = &x[(t * xs + (xs == 1 ? 0 : j)) * K];
                double mag = std::fabs(bias[e * N + c]);
                for (int64_t i = 0; i < K; ++i) mag += std::fabs((double)xr[i] * wr[i]);
                const double quant = is_float(dtype) ? 0.0 : q8_bound(dtype, xr, wr, K);
                const size_t at = (t * k + j) * N + c;
                EXPECT_LE(std::fabs((double)out[0][at] - out[1][at]),
                          scale[e] * (kRtol * mag + quant))
                    << "token " << t << " slot " << j << " column " << c;
              }
        }
      }
}

}  // namespace
