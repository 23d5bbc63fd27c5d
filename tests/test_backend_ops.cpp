// Every backend op of every in-tree CPU backend against a naive reference written here (it
// shares no code with the backends; weights are encoded with the dtype table's codecs but
// decoded here, the block types by quant_oracle.h).
//
// Tolerances: an element passes when |got - ref| <= rtol * mag (+ a tiny absolute floor where
// results underflow), where mag is the natural error scale of the op: sum |x_k * w_k| for dot
// products, sum p_j |v_j| for attention, |ref| for element-wise ops. rtol is 1e-5 for F32
// paths and 1e-4 for F16/BF16/quantised weights (compared against the naive result computed on
// the dequantised weights, so only accumulation order differs). Matmuls with quantised (block
// type) weights add act_quant_bound.h's bound: a backend may quantize the activations to 8-bit
// blocks as llama.cpp's CPU backend does (cpu_onednn's GEMV does).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "act_quant_bound.h"
#include "backend_fixture.h"
#include "op_compare.h"
#include "quant_oracle.h"
#include "rope_ext_args.h"
#include "switchyard/common/dtype.h"
#include "test_rng.h"

namespace {

using sy::test::abs_of;
using sy::test::close;
using sy::test::encode;
using sy::test::LoadedPlugin;

constexpr double kF32Tol = 1e-5;
constexpr double kQuantTol = 1e-4;
constexpr double kTinyAbs = 1e-30;  // underflowed exponentials

// Every weight type: the float types and ggml's block types (decoded by quant_oracle.h).
const uint32_t kWeightDtypes[] = {SY_DTYPE_F32,  SY_DTYPE_F16,    SY_DTYPE_BF16,   SY_DTYPE_Q8_0,
                                  SY_DTYPE_Q4_0, SY_DTYPE_Q4_1,   SY_DTYPE_Q5_0,   SY_DTYPE_Q5_1,
                                  SY_DTYPE_Q2_K, SY_DTYPE_Q3_K,   SY_DTYPE_Q4_K,   SY_DTYPE_Q5_K,
                                  SY_DTYPE_Q6_K, SY_DTYPE_IQ4_NL, SY_DTYPE_IQ4_XS, SY_DTYPE_MXFP4};
uint64_t mask_of_all_weight_dtypes() {
  uint64_t m = 0;
  for (uint32_t t : kWeightDtypes) m |= 1ull << t;
  return m;
}
// Row lengths a matmul test uses for a type: whole blocks, several per row where it can.
std::vector<int64_t> row_lengths(uint32_t dtype, std::vector<int64_t> for_small_blocks) {
  if (sy::test::oracle::format(dtype).values == 256) return {256, 512};
  return for_small_blocks;
}

struct Rng : sy::test::XorShiftRng {
  explicit Rng(uint64_t seed) : XorShiftRng(seed, 1) {}
};

// ---------------------------------------------------------------------------------------------
// The naive reference.
namespace naive {

float f16(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return (float)v;
}
float bf16(uint16_t h) {
  const uint32_t b = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Row-major F32 copy of a {k, n} weight matrix stored as `dtype`.
std::vector<float> decode(uint32_t dtype, const uint8_t* p, int64_t k, int64_t n) {
  std::vector<float> out(k * n);
  for (int64_t j = 0; j < n * k; ++j) {
    switch (dtype) {
      case SY_DTYPE_F32:
        std::memcpy(&out[j], p + 4 * j, 4);
        break;
      case SY_DTYPE_F16:
        out[j] = f16((uint16_t)(p[2 * j] | p[2 * j + 1] << 8));
        break;
      case SY_DTYPE_BF16:
        out[j] = bf16((uint16_t)(p[2 * j] | p[2 * j + 1] << 8));
        break;
      case SY_DTYPE_Q8_0: {
        const uint8_t* block = p + (j / 32) * 34;  // fp16 scale, then 32 int8
        out[j] = f16((uint16_t)(block[0] | block[1] << 8)) * (float)(int8_t)block[2 + j % 32];
        break;
      }
      default:  // the other block types: quant_oracle.h, whole rows at once below
        break;
    }
  }
  if (dtype != SY_DTYPE_Q8_0 && sy::test::oracle::is_block_type(dtype))
    out = sy::test::oracle::decode(dtype, p, k * n);
  return out;
}

struct Result {
  std::vector<double> ref, mag;
  std::vector<double> act_q8;  // act_quant_bound.h's bound per element
};

Result matmul(const std::vector<float>& x, int64_t m, int64_t k, const std::vector<float>& w,
              int64_t n) {
  Result r{std::vector<double>(m * n), std::vector<double>(m * n), std::vector<double>(m * n)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      r.act_q8[i * n + j] = sy::test::act_q8_bound(&x[i * k], &w[j * k], k);
      double s = 0, a = 0;
      for (int64_t c = 0; c < k; ++c) {
        s += (double)x[i * k + c] * w[j * k + c];
        a += std::fabs((double)x[i * k + c] * w[j * k + c]);
      }
      r.ref[i * n + j] = s;
      r.mag[i * n + j] = a;
    }
  return r;
}

std::vector<double> rms_norm(const std::vector<float>& x, int64_t n, const std::vector<float>& w,
                             double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += (double)x[r * n + i] * x[r * n + i];
    const double rms = std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i) y[r * n + i] = x[r * n + i] / rms * w[i];
  }
  return y;
}

// Returns the rotated values and, per element, the norm of the pair it belongs to.
Result rope(const std::vector<float>& x, int64_t head_dim, int64_t n_head,
            const std::vector<int32_t>& pos, int n_rot, double base, double scale, bool neox) {
  Result r{std::vector<double>(x.begin(), x.end()), std::vector<double>(x.size()), {}};
  for (size_t i = 0; i < x.size(); ++i) r.mag[i] = std::fabs(x[i]);
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t h = 0; h < n_head; ++h) {
      const size_t o = (t * n_head + h) * head_dim;
      for (int i = 0; i < n_rot / 2; ++i) {
        const double theta = pos[t] * scale / std::pow(base, 2.0 * i / n_rot);
        const size_t a = o + (neox ? i : 2 * i), b = o + (neox ? i + n_rot / 2 : 2 * i + 1);
        r.ref[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
        r.ref[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
        r.mag[a] = r.mag[b] = std::hypot((double)x[a], (double)x[b]);
      }
    }
  return r;
}

std::vector<double> softmax(const std::vector<float>& x, int64_t n) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, (double)x[r * n + i]);
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - mx);
    for (int64_t i = 0; i < n; ++i) y[r * n + i] = std::exp(x[r * n + i] - mx) / sum;
  }
  return y;
}

struct AttnCase {
  int64_t head_dim, n_head, n_kv_head, block_size;
  std::vector<uint32_t> seq_start;
  std::vector<int32_t> pos, block_tables;
  uint32_t max_blocks;
  double scale;
};

// Causal attention reading the cache (rows of head_dim * n_kv_head) through the block table.
Result attention(const AttnCase& c, const std::vector<float>& q, const std::vector<float>& kc,
                 const std::vector<float>& vc) {
  const int64_t width = c.head_dim * c.n_kv_head;
  Result r{std::vector<double>(q.size()), std::vector<double>(q.size()), {}};
  for (size_t s = 0; s + 1 < c.seq_start.size(); ++s)
    for (uint32_t t = c.seq_start[s]; t < c.seq_start[s + 1]; ++t)
      for (int64_t h = 0; h < c.n_head; ++h) {
        const int64_t kvh = h / (c.n_head / c.n_kv_head);
        const float* qv = &q[(t * c.n_head + h) * c.head_dim];
        std::vector<double> score;
        std::vector<const float*> vrows;
        for (int32_t p = 0; p <= c.pos[t]; ++p) {
          const int64_t block = c.block_tables[s * c.max_blocks + p / c.block_size];
          const int64_t slot = block * c.block_size + p % c.block_size;
          double d = 0;
          for (int64_t i = 0; i < c.head_dim; ++i)
            d += (double)qv[i] * kc[slot * width + kvh * c.head_dim + i];
          score.push_back(d * c.scale);
          vrows.push_back(&vc[slot * width + kvh * c.head_dim]);
        }
        const double mx = *std::max_element(score.begin(), score.end());
        double sum = 0;
        for (double& e : score) sum += e = std::exp(e - mx);
        for (int64_t i = 0; i < c.head_dim; ++i) {
          double o = 0, a = 0;
          for (size_t p = 0; p < score.size(); ++p) {
            o += score[p] / sum * vrows[p][i];
            a += score[p] / sum * std::fabs(vrows[p][i]);
          }
          r.ref[(t * c.n_head + h) * c.head_dim + i] = o;
          r.mag[(t * c.n_head + h) * c.head_dim + i] = a;
        }
      }
  return r;
}

}  // namespace naive

// ---------------------------------------------------------------------------------------------
// One backend instance per test, parameterised over the plugins.
class BackendOps : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    plugin_ = &LoadedPlugin::backend(GetParam());
    api_ = &plugin_->iface();
    handle_ = std::make_unique<sy::test::Handle>(*api_);
    ASSERT_EQ(handle_->status(), SY_OK) << api_->last_error(nullptr);
    be_ = handle_->get();
  }
  void TearDown() override {
    for (sy_buffer_t b : buffers_) api_->buffer_free(be_, b);
    handle_.reset();  // frees the buffers made through it, then the backend
  }

  sy_buffer_t alloc(uint64_t size) { return handle_->alloc(size); }
  sy_buffer_t upload(const void* data, uint64_t size) { return handle_->upload(data, size); }
  template <class T>
  sy_buffer_t upload(const std::vector<T>& v) {
    return upload(v.data(), v.size() * sizeof(T));
  }
  static sy_tensor tensor(uint32_t dtype, sy_buffer_t buf, uint64_t offset,
                          std::vector<int64_t> ne) {
    return sy::test::Handle::tensor(dtype, buf, offset, std::move(ne));
  }
  // A fresh buffer holding `v` as an F32 tensor of shape ne.
  sy_tensor f32(const std::vector<float>& v, std::vector<int64_t> ne) {
    return handle_->make(v, std::move(ne));
  }
  std::vector<float> read(const sy_tensor& t) { return handle_->read(t); }
  std::string error() const { return api_->last_error(be_); }

  const LoadedPlugin* plugin_ = nullptr;
  const sy_backend_iface* api_ = nullptr;
  std::unique_ptr<sy::test::Handle> handle_;
  sy_backend_t be_ = nullptr;
  std::vector<sy_buffer_t> buffers_;  // buffers a test made itself (buffer_from_host)
};

std::string backend_name(const ::testing::TestParamInfo<std::string>& p) {
  return p.param;
}

// ---------------------------------------------------------------------------------------------
// Plugin entry and device info.

TEST_P(BackendOps, EntryFillsInfoAndNegotiatesMinor) {
  sy_plugin_info info = {};
  info.struct_size = sizeof info;
  ASSERT_EQ(
      plugin_->entry()(SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 7), sy::test::test_host_api(), &info),
      SY_OK);
  EXPECT_EQ(info.abi_version, SY_ABI_VERSION);  // min(host 7, ours)
  EXPECT_EQ(info.kind, (uint32_t)SY_PLUGIN_BACKEND);
  EXPECT_EQ(std::string(info.name), GetParam());
  EXPECT_STREQ(info.version, "0.1.0");
  EXPECT_GT(std::strlen(info.description), 0u);
  EXPECT_TRUE(info.capabilities & SY_CAP_ZERO_COPY_HOST);
  EXPECT_EQ(info.iface, plugin_->info().iface);
  const auto* iface = static_cast<const sy_backend_iface*>(info.iface);
  EXPECT_EQ(iface->struct_size, sizeof(sy_backend_iface));
  // An older host gets the older minor.
  ASSERT_EQ(
      plugin_->entry()(SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0), sy::test::test_host_api(), &info),
      SY_OK);
  EXPECT_EQ(info.abi_version, SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0));
  // Every 1.0 entry is implemented (estimate_step_ns, 1.1, is optional and left NULL).
  for (const void* fn : {(const void*)iface->create,       (const void*)iface->destroy,
                         (const void*)iface->last_error,   (const void*)iface->device_info,
                         (const void*)iface->buffer_alloc, (const void*)iface->buffer_from_host,
                         (const void*)iface->buffer_free,  (const void*)iface->buffer_host_ptr,
                         (const void*)iface->buffer_write, (const void*)iface->buffer_read,
                         (const void*)iface->synchronize,  (const void*)iface->get_rows,
                         (const void*)iface->matmul,       (const void*)iface->rms_norm,
                         (const void*)iface->rope,         (const void*)iface->add,
                         (const void*)iface->swiglu,       (const void*)iface->softmax,
                         (const void*)iface->kv_store,     (const void*)iface->attention})
    EXPECT_NE(fn, nullptr);
  // The 1.1 hybrid ops are implemented too (tested in test_hybrid_ops.cpp).
  for (const void* fn :
       {(const void*)iface->ssm_conv, (const void*)iface->ssm_scan, (const void*)iface->moe_gate,
        (const void*)iface->moe_matmul, (const void*)iface->moe_combine})
    EXPECT_NE(fn, nullptr);
}

TEST_P(BackendOps, EntryRefusesOtherMajor) {
  char err[128] = {};
  sy_plugin_info info = {};
  info.struct_size = sizeof info;
  info.error_buf = err;
  info.error_buf_size = sizeof err;
  EXPECT_EQ(plugin_->entry()(SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR + 1, 0),
                             sy::test::test_host_api(), &info),
            SY_ERR_VERSION);
  EXPECT_EQ(std::string(err),
            GetParam() + ": host ABI major " + std::to_string(SY_ABI_VERSION_MAJOR + 1) +
                " differs from the plugin's ABI " + std::to_string(SY_ABI_VERSION_MAJOR) + "." +
                std::to_string(SY_ABI_VERSION_MINOR));
}

TEST_P(BackendOps, EntryWritesOnlyWhatStructSizeCovers) {
  sy_plugin_info info;
  std::memset(&info, 0xAB, sizeof info);
  info.struct_size = offsetof(sy_plugin_info, description);  // an older, shorter info
  ASSERT_EQ(plugin_->entry()(SY_ABI_VERSION, sy::test::test_host_api(), &info), SY_OK);
  EXPECT_EQ(std::string(info.name), GetParam());
  const unsigned char* tail = (const unsigned char*)&info + info.struct_size;
  for (size_t i = 0; i < sizeof info - info.struct_size; ++i) ASSERT_EQ(tail[i], 0xAB) << i;
}

TEST_P(BackendOps, DeviceInfo) {
  sy_device_info d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  ASSERT_EQ(api_->device_info(be_, &d), SY_OK) << error();
  EXPECT_EQ(d.struct_size, sizeof d);
  EXPECT_EQ(d.kind, (uint32_t)SY_DEVICE_CPU);
  EXPECT_EQ(d.available, 1u);
  EXPECT_GT(strnlen(d.name, sizeof d.name), 0u);
  EXPECT_LT(strnlen(d.name, sizeof d.name), sizeof d.name);
  EXPECT_GT(strnlen(d.vendor, sizeof d.vendor), 0u);
  EXPECT_LT(strnlen(d.vendor, sizeof d.vendor), sizeof d.vendor);
  EXPECT_EQ(d.memory_total, (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE));
  EXPECT_GT(d.memory_free, 0u);
  EXPECT_EQ(d.weight_dtypes, mask_of_all_weight_dtypes());

  // A caller with a shorter struct only gets the fields it has room for.
  sy_device_info shortd;
  std::memset(&shortd, 0x5A, sizeof shortd);
  shortd.struct_size = offsetof(sy_device_info, name);
  ASSERT_EQ(api_->device_info(be_, &shortd), SY_OK) << error();
  EXPECT_EQ(shortd.kind, (uint32_t)SY_DEVICE_CPU);
  EXPECT_EQ((unsigned char)shortd.name[0], 0x5A);
}

// ---------------------------------------------------------------------------------------------
// Memory.

TEST_P(BackendOps, BufferWriteReadRoundTrip) {
  std::vector<uint8_t> data(500);
  for (size_t i = 0; i < data.size(); ++i) data[i] = (uint8_t)(i * 7 + 3);
  sy_buffer_t b = alloc(1000);
  ASSERT_EQ(api_->buffer_write(be_, b, 100, data.data(), data.size()), SY_OK) << error();
  std::vector<uint8_t> back(500);
  ASSERT_EQ(api_->synchronize(be_), SY_OK);
  ASSERT_EQ(api_->buffer_read(be_, b, 100, back.data(), back.size()), SY_OK) << error();
  EXPECT_EQ(back, data);
  std::vector<uint8_t> part(50);
  ASSERT_EQ(api_->buffer_read(be_, b, 300, part.data(), part.size()), SY_OK) << error();
  EXPECT_TRUE(std::equal(part.begin(), part.end(), data.begin() + 200));
  // CPU buffers are host visible and 64-byte aligned.
  auto* p = static_cast<uint8_t*>(api_->buffer_host_ptr(be_, b));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((uintptr_t)p % 64, 0u);
  EXPECT_EQ(std::memcmp(p + 100, data.data(), data.size()), 0);
  // Zero-sized buffers and transfers are valid.
  sy_buffer_t empty = alloc(0);
  EXPECT_EQ(api_->buffer_write(be_, empty, 0, nullptr, 0), SY_OK) << error();
}

TEST_P(BackendOps, BufferFromHostIsZeroCopy) {
  Rng rng(1);
  std::vector<float> a = rng.vec(111), b = rng.vec(111), y(111, -1.0f);
  sy_buffer_t ba = nullptr, bb = nullptr, by = nullptr;
  ASSERT_EQ(api_->buffer_from_host(be_, a.data(), a.size() * 4, &ba), SY_OK) << error();
  ASSERT_EQ(api_->buffer_from_host(be_, b.data(), b.size() * 4, &bb), SY_OK) << error();
  ASSERT_EQ(api_->buffer_from_host(be_, y.data(), y.size() * 4, &by), SY_OK) << error();
  buffers_.insert(buffers_.end(), {ba, bb, by});
  EXPECT_EQ(api_->buffer_host_ptr(be_, ba), a.data());
  // Changed after wrapping: the op must read the host memory itself.
  a[5] = 1000.0f;
  const float written = 250.0f;
  ASSERT_EQ(api_->buffer_write(be_, bb, 6 * 4, &written, 4), SY_OK);
  EXPECT_EQ(b[6], 250.0f);  // buffer_write lands in the wrapped memory
  sy_tensor ta = tensor(SY_DTYPE_F32, ba, 0, {37, 3}), tb = tensor(SY_DTYPE_F32, bb, 0, {37, 3}),
            ty = tensor(SY_DTYPE_F32, by, 0, {37, 3});
  ASSERT_EQ(api_->add(be_, &ta, &tb, &ty), SY_OK) << error();
  ASSERT_EQ(api_->synchronize(be_), SY_OK);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], a[i] + b[i]) << i;
}

// ---------------------------------------------------------------------------------------------
// matmul

// One matmul with W as the middle of three "experts" in one buffer (at a nonzero offset, as an
// expert slice would be), x and y at offsets inside larger buffers, and nothing around y written.
class Matmul : public BackendOps {
 public:
  void run(uint32_t dtype, int64_t m, int64_t k, int64_t n, uint64_t seed) {
    SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " M=" + std::to_string(m) +
                 " K=" + std::to_string(k) + " N=" + std::to_string(n));
    Rng rng(seed);
    const int64_t wbytes = sy::dtype::row_bytes(dtype, k) * n;
    const uint64_t pad = 68;  // keeps every dtype's alignment, but is not a row boundary
    std::vector<uint8_t> wbuf(pad + 3 * wbytes);
    for (int e = 0; e < 3; ++e) {
      auto enc = encode(dtype, rng.vec(k * n), k, n);
      std::copy(enc.begin(), enc.end(), wbuf.begin() + pad + e * wbytes);
    }
    const uint64_t w_off = pad + wbytes;  // expert 1
    const std::vector<float> w = naive::decode(dtype, &wbuf[w_off], k, n);
    const std::vector<float> x = rng.vec(m * k);

    std::vector<float> xbuf(4 + m * k, NAN);
    std::copy(x.begin(), x.end(), xbuf.begin() + 4);
    const uint64_t y_off = 32, y_bytes = m * n * 4, y_total = y_off + y_bytes + 64;
    std::vector<uint8_t> ybuf(y_total, 0xEE);
    sy_tensor tx = tensor(SY_DTYPE_F32, upload(xbuf), 16, {k, m});
    sy_tensor tw = tensor(dtype, upload(wbuf), w_off, {k, n});
    sy_tensor ty = tensor(SY_DTYPE_F32, upload(ybuf), y_off, {n, m});
    ASSERT_EQ(api_->matmul(be_, &tx, &tw, &ty), SY_OK) << error();

    const auto ref = naive::matmul(x, m, k, w, n);
    EXPECT_TRUE(close(read(ty), ref.ref, ref.mag, dtype == SY_DTYPE_F32 ? kF32Tol : kQuantTol, 0,
                      sy::test::oracle::is_block_type(dtype) ? &ref.act_q8 : nullptr));
    std::vector<uint8_t> after(y_total);
    ASSERT_EQ(api_->buffer_read(be_, ty.buffer, 0, after.data(), y_total), SY_OK);
    for (uint64_t i = 0; i < y_total; ++i)
      if (i < y_off || i >= y_off + y_bytes) {
        ASSERT_EQ(after[i], 0xEE) << "wrote byte " << i;
      }
  }
};

TEST_P(Matmul, AllWeightDtypesAndBatchSizes) {
  uint64_t seed = 10;
  for (uint32_t dtype : kWeightDtypes) {
    std::vector<int64_t> ks = row_lengths(dtype, {64, 96, 256});
    if (dtype == SY_DTYPE_F32) ks.push_back(70);
    for (int64_t k : ks)
      for (int64_t m : {1, 3, 37, 130}) run(dtype, m, k, 77, seed++);
  }
}

// Around the fused-kernel limit (M = 4 / 5) and with several dequantised panels.
// The quantised types beyond Q8_0 share one dequantised-panel path: three of them stand in.
TEST_P(Matmul, PanelBoundariesAndWideK) {
  uint64_t seed = 100;
  for (uint32_t dtype : {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16, SY_DTYPE_Q8_0, SY_DTYPE_Q4_0,
                         SY_DTYPE_Q4_K, SY_DTYPE_IQ4_XS})
    for (int64_t m : {2, 4, 5, 130}) run(dtype, m, 1024, 300, seed++);
}

TEST_P(Matmul, SingleOutputAndSingleInput) {
  run(SY_DTYPE_F32, 3, 1, 5, 200);
  run(SY_DTYPE_F16, 2, 9, 1, 201);  // F16 rows of any length: the kernel's scalar tail
  run(SY_DTYPE_BF16, 6, 23, 3, 202);
  run(SY_DTYPE_Q8_0, 1, 32, 1, 203);
  run(SY_DTYPE_Q4_K, 1, 256, 1, 204);  // one super-block
  run(SY_DTYPE_IQ4_NL, 5, 32, 2, 205);
}

// ---------------------------------------------------------------------------------------------
// get_rows

TEST_P(BackendOps, GetRowsEveryDtype) {
  const std::vector<int32_t> ids = {3, 0, 49, 3, 17};
  for (uint32_t dtype : kWeightDtypes) {
    for (int64_t k : row_lengths(dtype, {64, 70})) {
      if (k % sy::dtype::block_elems(dtype)) continue;
      SCOPED_TRACE(std::string(sy::dtype::name(dtype)) + " K=" + std::to_string(k));
      Rng rng(dtype * 31 + k);
      std::vector<uint8_t> table = encode(dtype, rng.vec(k * 50), k, 50);
      table.insert(table.begin(), 8, 0);  // the table at a nonzero offset
      const std::vector<float> decoded = naive::decode(dtype, &table[8], k, 50);
      sy_tensor tt = tensor(dtype, upload(table), 8, {k, 50});
      sy_tensor td = tensor(SY_DTYPE_F32, alloc(ids.size() * k * 4), 0, {k, (int64_t)ids.size()});
      ASSERT_EQ(api_->get_rows(be_, &tt, ids.data(), (uint32_t)ids.size(), &td), SY_OK) << error();
      const std::vector<float> got = read(td);
      for (size_t r = 0; r < ids.size(); ++r)
        for (int64_t i = 0; i < k; ++i)
          ASSERT_EQ(got[r * k + i], decoded[ids[r] * k + i]) << "row " << r << " col " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Element-wise and row-wise ops

TEST_P(BackendOps, RmsNormInPlaceAndOutOfPlace) {
  for (int64_t n : {96, 13, 4096}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Rng rng(n);
    const std::vector<float> x = rng.vec(n * 5, -2.0f, 2.0f), w = rng.vec(n, 0.5f, 1.5f);
    const auto ref = naive::rms_norm(x, n, w, 1e-5);
    sy_tensor tx = f32(x, {n, 5}), tw = f32(w, {n}), ty = f32(std::vector<float>(n * 5), {n, 5});
    ASSERT_EQ(api_->rms_norm(be_, &tx, &tw, 1e-5f, &ty), SY_OK) << error();
    EXPECT_TRUE(close(read(ty), ref, abs_of(ref), kF32Tol));
    ASSERT_EQ(api_->rms_norm(be_, &tx, &tw, 1e-5f, &tx), SY_OK) << error();  // y aliases x
    EXPECT_TRUE(close(read(tx), ref, abs_of(ref), kF32Tol));
  }
}

TEST_P(BackendOps, RopeNormAndNeoxRotateOnlyNRot) {
  const int64_t head_dim = 64, n_head = 4;
  const std::vector<int32_t> pos = {0, 1, 7, 300, 4097};
  for (bool neox : {false, true})
    for (int n_rot : {32, 64})
      for (float scale : {1.0f, 0.25f}) {
        SCOPED_TRACE(std::string(neox ? "NEOX" : "NORM") + " n_rot=" + std::to_string(n_rot) +
                     " freq_scale=" + std::to_string(scale));
        Rng rng(n_rot + neox);
        const std::vector<float> x = rng.vec(head_dim * n_head * pos.size());
        const auto ref = naive::rope(x, head_dim, n_head, pos, n_rot, 10000.0, scale, neox);
        sy_tensor tx = f32(x, {head_dim, n_head, (int64_t)pos.size()});
        ASSERT_EQ(api_->rope(be_, &tx, pos.data(), n_rot, 10000.0f, scale,
                             neox ? SY_ROPE_NEOX : SY_ROPE_NORM),
                  SY_OK)
            << error();
        const std::vector<float> got = read(tx);
        EXPECT_TRUE(close(got, ref.ref, ref.mag, kF32Tol));
        for (size_t i = 0; i < x.size(); ++i)  // dims past n_rot pass through untouched
          if ((int64_t)(i % head_dim) >= n_rot) {
            ASSERT_EQ(got[i], x[i]) << i;
          }
      }
}

TEST_P(BackendOps, RopeMatchesLlamaCppPairing) {
  // One head, pos 1, n_rot 4, base 100: pair i has theta = 100^(-i/2) = {1, 0.1}.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> pos = {1};
  const double c0 = std::cos(1.0), s0 = std::sin(1.0), c1 = std::cos(0.1), s1 = std::sin(0.1);
  const std::vector<double> norm = {
      1 * c0 - 2 * s0, 1 * s0 + 2 * c0, 3 * c1 - 4 * s1, 3 * s1 + 4 * c1, 5, 6};
  const std::vector<double> neox = {
      1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 1 * s0 + 3 * c0, 2 * s1 + 4 * c1, 5, 6};
  for (uint32_t mode : {(uint32_t)SY_ROPE_NORM, (uint32_t)SY_ROPE_NEOX}) {
    sy_tensor tx = f32(x, {6, 1, 1});
    ASSERT_EQ(api_->rope(be_, &tx, pos.data(), 4, 100.0f, 1.0f, mode), SY_OK) << error();
    const auto& want = mode == SY_ROPE_NORM ? norm : neox;
    EXPECT_TRUE(close(read(tx), want, std::vector<double>(6, 5.0), kF32Tol)) << "mode " << mode;
  }
}

// rope_ext's recipe written out once more, independently of the backends: ggml's F32 order.
std::vector<float> rope_ext_f32(const std::vector<float>& x, int64_t head_dim, int64_t n_head,
                                const std::vector<int32_t>& pos, const sy_rope_ext_args& a,
                                const std::vector<float>& ff) {
  std::vector<float> y = x;
  const int half = int(a.n_rot / 2);
  const float theta_scale = std::pow(a.freq_base, -2.0f / float(a.n_rot));
  auto corr = [&](float beta) {
    return float(a.n_rot) * std::log(float(a.n_ctx_orig) / (beta * 2 * float(M_PI))) /
           (2 * std::log(a.freq_base));
  };
  const float lo = std::max(0.0f, std::floor(corr(a.beta_fast)));
  const float hi = std::min(float(a.n_rot) - 1, std::ceil(corr(a.beta_slow)));
  for (size_t t = 0; t < pos.size(); ++t) {
    float theta = float(pos[t]);
    for (int i = 0; i < half; ++i) {
      const float e = theta / (ff.empty() ? 1.0f : ff[i]);
      float th = a.freq_scale * e, m = a.attn_factor;
      if (a.ext_factor != 0.0f) {
        const float mix =
            (1 - std::min(1.0f, std::max(0.0f, (float(i) - lo) / std::max(0.001f, hi - lo)))) *
            a.ext_factor;
        th = th * (1 - mix) + e * mix;
        m *= 1.0f + 0.1f * std::log(1.0f / a.freq_scale);
      }
      const float c = std::cos(th) * m, sn = std::sin(th) * m;
      for (int64_t h = 0; h < n_head; ++h) {
        float* v = &y[(t * n_head + h) * head_dim];
        const int i0 = a.mode == SY_ROPE_NEOX ? i : 2 * i,
                  i1 = a.mode == SY_ROPE_NEOX ? i + half : 2 * i + 1;
        const float p = v[i0], q = v[i1];
        v[i0] = p * c - q * sn;
        v[i1] = p * sn + q * c;
      }
      theta *= theta_scale;
    }
  }
  return y;
}

using sy::test::rope_ext_args;

// Small positions: the exact rotation (double angles) within F32 rounding. With frequency
// factors 1 the op is the 1.0 rope times attn_factor.
TEST_P(BackendOps, RopeExtWithoutFactorsIsTheScaledRotation) {
  const int64_t head_dim = 64, n_head = 4;
  const std::vector<int32_t> pos = {0, 1, 7, 23};
  for (bool neox : {false, true}) {
    Rng rng(31 + neox);
    const std::vector<float> x = rng.vec(head_dim * n_head * pos.size());
    auto ref = naive::rope(x, head_dim, n_head, pos, 48, 10000.0, 0.25, neox);
    for (size_t i = 0; i < x.size(); ++i)
      if ((int64_t)(i % head_dim) < 48) ref.ref[i] *= 1.25, ref.mag[i] *= 1.25;
    sy_tensor tx = f32(x, {head_dim, n_head, (int64_t)pos.size()});
    const auto a =
        rope_ext_args(&tx, pos.data(), nullptr, 48, neox ? SY_ROPE_NEOX : SY_ROPE_NORM, 0);
    ASSERT_EQ(api_->rope_ext(be_, &a), SY_OK) << error();
    EXPECT_TRUE(close(read(tx), ref.ref, ref.mag, kF32Tol)) << (neox ? "NEOX" : "NORM");
  }
}

// Large angles (a factor of 0.001 at position 3000: 3e6 radians, where one F32 ulp is 0.25 rad),
// YaRN on and off: the backends compute ggml's F32 angles, as the recipe in backend.h says.
TEST_P(BackendOps, RopeExtFollowsTheF32RecipeAtLargeAngles) {
  const int64_t head_dim = 32, n_head = 3;
  const std::vector<int32_t> pos = {0, 5, 700, 3000};
  Rng rng(33);
  const std::vector<float> x = rng.vec(head_dim * n_head * pos.size());
  std::vector<float> ff = rng.vec(16, 0.5f, 8.0f);
  ff[0] = 0.001f;
  ff[3] = -0.002f;
  for (uint32_t mode : {(uint32_t)SY_ROPE_NORM, (uint32_t)SY_ROPE_NEOX})
    for (float ext : {0.0f, 1.0f}) {
      SCOPED_TRACE("mode " + std::to_string(mode) + " ext " + std::to_string(ext));
      sy_tensor tx = f32(x, {head_dim, n_head, (int64_t)pos.size()}), tf = f32(ff, {16});
      const auto a = rope_ext_args(&tx, pos.data(), &tf, 32, mode, ext);
      ASSERT_EQ(api_->rope_ext(be_, &a), SY_OK) << error();
      const auto want = rope_ext_f32(x, head_dim, n_head, pos, a, ff);
      std::vector<double> w(want.begin(), want.end()), mag(want.size());
      for (size_t i = 0; i < x.size(); ++i) mag[i] = 5.0;  // |x| <= 1, |rotation| <= 1.25
      EXPECT_TRUE(close(read(tx), w, mag, 1e-6));
    }
}

TEST_P(BackendOps, BiasScaleBothOrdersWithAndWithoutBias) {
  Rng rng(34);
  const std::vector<float> x = rng.vec(37 * 3, -5, 5), bias = rng.vec(37, -1, 1);
  for (uint32_t order : {(uint32_t)SY_SCALE_THEN_BIAS, (uint32_t)SY_BIAS_THEN_SCALE})
    for (int variant = 0; variant < 3; ++variant) {  // bias and y distinct, bias in place, no bias
      SCOPED_TRACE("order " + std::to_string(order) + " variant " + std::to_string(variant));
      sy_tensor tx = f32(x, {37, 3}), tb = f32(bias, {37}),
                ty = f32(std::vector<float>(111), {37, 3});
      const sy_tensor& y = variant == 0 ? ty : tx;
      const sy_bias_scale_args a{sizeof a, order, &tx, variant == 2 ? nullptr : &tb, &y, -0.75f, 0};
      ASSERT_EQ(api_->bias_scale(be_, &a), SY_OK) << error();
      std::vector<double> want(111), mag(111);
      for (int i = 0; i < 111; ++i) {
        const double b = variant == 2 ? 0.0 : bias[i % 37];
        want[i] = order == SY_BIAS_THEN_SCALE ? (x[i] + b) * -0.75 : x[i] * -0.75 + b;
        mag[i] = std::fabs(x[i]) + std::fabs(b);
      }
      EXPECT_TRUE(close(read(y), want, mag, kF32Tol));
    }
}

TEST_P(BackendOps, ModelOpsRefuseBadArguments) {
  sy_tensor x = f32(std::vector<float>(37 * 2), {37, 2}), b10 = f32(std::vector<float>(10), {10});
  sy_bias_scale_args bs{sizeof bs, 7, &x, nullptr, &x, 1.0f, 0};
  EXPECT_EQ(api_->bias_scale(be_, &bs), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "bias_scale: order 7 is not a sy_bias_scale_order");
  bs.order = SY_SCALE_THEN_BIAS;
  bs.bias = &b10;
  EXPECT_EQ(api_->bias_scale(be_, &bs), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "bias_scale: bias has ne[0]=10 but x has ne[0]=37");
  bs.bias = nullptr;
  bs.scale = INFINITY;
  EXPECT_EQ(api_->bias_scale(be_, &bs), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "bias_scale: scale=inf must be finite");

  const std::vector<int32_t> pos = {0, 1};
  sy_tensor heads = f32(std::vector<float>(16 * 2 * 2), {16, 2, 2}),
            ff3 = f32(std::vector<float>(3, 1.0f), {3});
  auto a = rope_ext_args(&heads, pos.data(), &ff3, 8, SY_ROPE_NORM, 0);
  EXPECT_EQ(api_->rope_ext(be_, &a), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "rope_ext: freq_factors has ne[0]=3, expected 4");
  a = rope_ext_args(&heads, pos.data(), nullptr, 8, SY_ROPE_NORM, 1.0f);
  a.n_ctx_orig = 0;
  EXPECT_EQ(api_->rope_ext(be_, &a), SY_ERR_INVALID_ARG);
  EXPECT_EQ(
      error(),
      "rope_ext: YaRN (ext_factor=1) needs n_ctx_orig, beta_fast and beta_slow > 0, got 0, 32, 1");
  a = rope_ext_args(&heads, pos.data(), nullptr, 18, SY_ROPE_NORM, 0);
  EXPECT_EQ(api_->rope_ext(be_, &a), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "rope_ext: n_rot=18 must be even, positive and at most head_dim=16");
  a.n_rot = 8;
  a.struct_size = 8;
  EXPECT_EQ(api_->rope_ext(be_, &a), SY_ERR_INVALID_ARG);
  EXPECT_EQ(error(), "rope_ext: args has struct_size 8, expected at least " +
                         std::to_string(sizeof(sy_rope_ext_args)));
}

TEST_P(BackendOps, AddAndSwigluWithAliasing) {
  Rng rng(7);
  std::vector<float> a = rng.vec(111, -20.0f, 20.0f), b = rng.vec(111, -3.0f, 3.0f);
  a[0] = -100.0f;  // silu underflows
  a[1] = 100.0f;
  std::vector<double> sum(111), sw(111), sum_mag(111);
  for (size_t i = 0; i < a.size(); ++i) {
    sum[i] = (double)a[i] + b[i];
    sum_mag[i] = std::fabs(a[i]) + std::fabs(b[i]);
    sw[i] = a[i] / (1.0 + std::exp(-(double)a[i])) * b[i];
  }
  for (int alias = 0; alias < 3; ++alias) {  // y distinct, y == first input, y == second input
    SCOPED_TRACE("alias " + std::to_string(alias));
    sy_tensor ta = f32(a, {37, 3}), tb = f32(b, {37, 3}),
              ty = f32(std::vector<float>(111), {37, 3});
    const sy_tensor& y = alias == 0 ? ty : alias == 1 ? ta : tb;
    ASSERT_EQ(api_->add(be_, &ta, &tb, &y), SY_OK) << error();
    EXPECT_TRUE(close(read(y), sum, sum_mag, kF32Tol));
    ta = f32(a, {37, 3});
    tb = f32(b, {37, 3});
    const sy_tensor& y2 = alias == 0 ? ty : alias == 1 ? ta : tb;
    ASSERT_EQ(api_->swiglu(be_, &ta, &tb, &y2), SY_OK) << error();
    EXPECT_TRUE(close(read(y2), sw, abs_of(sw), kF32Tol, kTinyAbs));
  }
}

TEST_P(BackendOps, SoftmaxLargeValues) {
  const int64_t n = 37;
  Rng rng(3);
  std::vector<float> x;
  auto row = [&](float lo, float hi) {
    for (float v : rng.vec(n, lo, hi)) x.push_back(v);
  };
  row(1e4f, 1e4f + 50.0f);      // exp(x) alone would overflow
  row(-1e4f, 1e4f);             // most entries underflow to 0
  x.insert(x.end(), n, 1e30f);  // all equal: uniform
  row(-5.0f, 5.0f);
  x[3 * n + 4] = -INFINITY;  // a masked entry
  row(-88.0f, 0.0f);
  const auto ref = naive::softmax(x, n);
  const int64_t rows = (int64_t)x.size() / n;
  sy_tensor tx = f32(x, {n, rows}), ty = f32(std::vector<float>(x.size()), {n, rows});
  ASSERT_EQ(api_->softmax(be_, &tx, &ty), SY_OK) << error();
  EXPECT_TRUE(close(read(ty), ref, abs_of(ref), kF32Tol, kTinyAbs));
  ASSERT_EQ(api_->softmax(be_, &tx, &tx), SY_OK) << error();  // in place
  EXPECT_TRUE(close(read(tx), ref, abs_of(ref), kF32Tol, kTinyAbs));
}

// ---------------------------------------------------------------------------------------------
// kv_store + attention: three sequences in one batch (a prefill chunk continuing cached
// context, two decodes at long positions), shuffled block tables, GQA 8 query / 2 KV heads.

TEST_P(BackendOps, KvStoreAndPagedAttention) {
  naive::AttnCase c;
  c.head_dim = 32;
  c.n_head = 8;
  c.n_kv_head = 2;
  c.block_size = 16;
  c.max_blocks = 40;
  c.scale = 1.0 / std::sqrt(32.0);
  const int64_t width = c.head_dim * c.n_kv_head, n_blocks = 64, n_slots = n_blocks * 16;
  // Sequence s has cached positions [0, first[s]) and batch tokens at [first[s], last[s]].
  const std::vector<int32_t> first = {13, 300, 517}, last = {19, 300, 517};
  c.seq_start = {0};
  for (size_t s = 0; s < first.size(); ++s) {
    for (int32_t p = first[s]; p <= last[s]; ++p) c.pos.push_back(p);
    c.seq_start.push_back((uint32_t)c.pos.size());
  }
  // Blocks handed out in shuffled order, so no sequence's blocks are contiguous.
  std::vector<int32_t> perm(n_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(42);
  for (int64_t i = n_blocks - 1; i > 0; --i) std::swap(perm[i], perm[rng.next() % (i + 1)]);
  c.block_tables.assign(first.size() * c.max_blocks, -1);  // unused entries are never read
  size_t next = 0;
  for (size_t s = 0; s < first.size(); ++s)
    for (int32_t b = 0; b <= last[s] / 16; ++b) c.block_tables[s * c.max_blocks + b] = perm[next++];
  auto slot_of = [&](size_t s, int32_t p) {
    return c.block_tables[s * c.max_blocks + p / 16] * 16 + p % 16;
  };

  // Caches start as NaN: reading any slot that was never written poisons the result.
  std::vector<float> kc(n_slots * width, NAN), vc(n_slots * width, NAN);
  sy_tensor tkc = f32(kc, {width, n_slots}), tvc = f32(vc, {width, n_slots});
  auto store = [&](const std::vector<float>& k, const std::vector<float>& v,
                   const std::vector<int32_t>& slots) {
    const int64_t n = (int64_t)slots.size();
    sy_tensor tk = f32(k, {width, n}), tv = f32(v, {width, n});
    sy_kv_store_args a = {sizeof a, &tk, &tv, &tkc, &tvc, slots.data()};
    ASSERT_EQ(api_->kv_store(be_, &a), SY_OK) << error();
    for (int64_t t = 0; t < n; ++t) {  // mirror for the reference
      std::copy(&k[t * width], &k[(t + 1) * width], &kc[slots[t] * width]);
      std::copy(&v[t * width], &v[(t + 1) * width], &vc[slots[t] * width]);
    }
  };
  std::vector<int32_t> history;  // the context cached by earlier steps
  for (size_t s = 0; s < first.size(); ++s)
    for (int32_t p = 0; p < first[s]; ++p) history.push_back(slot_of(s, p));
  store(rng.vec(history.size() * width), rng.vec(history.size() * width), history);
  std::vector<int32_t> batch;
  for (size_t s = 0; s < first.size(); ++s)
    for (int32_t p = first[s]; p <= last[s]; ++p) batch.push_back(slot_of(s, p));
  store(rng.vec(batch.size() * width), rng.vec(batch.size() * width), batch);

  // kv_store wrote exactly the named rows.
  const std::vector<float> kc_dev = read(tkc), vc_dev = read(tvc);
  ASSERT_EQ(std::memcmp(kc_dev.data(), kc.data(), kc.size() * 4), 0);
  ASSERT_EQ(std::memcmp(vc_dev.data(), vc.data(), vc.size() * 4), 0);

  const int64_t n_tokens = (int64_t)c.pos.size();
  const std::vector<float> q = rng.vec(c.head_dim * c.n_head * n_tokens, -3.0f, 3.0f);
  sy_tensor tq = f32(q, {c.head_dim, c.n_head, n_tokens});
  sy_tensor tout = f32(std::vector<float>(q.size()), {c.head_dim, c.n_head, n_tokens});
  sy_attention_args a = {sizeof a,
                         &tq,
                         &tkc,
                         &tvc,
                         &tout,
                         (uint32_t)c.n_kv_head,
                         (uint32_t)first.size(),
                         c.seq_start.data(),
                         c.pos.data(),
                         c.block_tables.data(),
                         c.max_blocks,
                         (uint32_t)c.block_size,
                         (float)c.scale};
  ASSERT_EQ(api_->attention(be_, &a), SY_OK) << error();
  const auto ref = naive::attention(c, q, kc, vc);
  EXPECT_TRUE(close(read(tout), ref.ref, ref.mag, kF32Tol));
}

// ---------------------------------------------------------------------------------------------
// Validation: every error path returns the exact status and message, and leaves the backend
// usable.

struct ErrorCase {
  const char* what;
  sy_status status;
  std::string message;
  std::function<sy_status()> call;
};

TEST_P(BackendOps, ValidationErrors) {
  const sy_backend_iface& A = *api_;
  sy_backend_t be = be_;
  Rng rng(5);
  sy_tensor x = f32(rng.vec(64 * 2), {64, 2});
  sy_tensor w = f32(rng.vec(32 * 10), {32, 10});  // K mismatch with x
  sy_tensor w64 = f32(rng.vec(64 * 10), {64, 10});
  sy_tensor y = f32(std::vector<float>(20), {10, 2});
  sy_tensor x48 = f32(rng.vec(48), {48, 1});
  sy_tensor y1 = f32(std::vector<float>(10), {10, 1});
  sy_tensor q48 = tensor(SY_DTYPE_Q8_0, alloc(34 * 10 * 2), 0, {48, 10});
  sy_tensor xf16 = tensor(SY_DTYPE_F16, alloc(64 * 2 * 2), 0, {64, 2});
  sy_buffer_t big = alloc(4096);
  sy_tensor x_in_big = tensor(SY_DTYPE_F32, big, 0, {64, 2});    // bytes [0, 512)
  sy_tensor y_in_big = tensor(SY_DTYPE_F32, big, 480, {10, 2});  // bytes [480, 560)

  sy_backend_t other = nullptr;
  ASSERT_EQ(A.create(nullptr, 0, &other), SY_OK);
  sy_buffer_t foreign = nullptr;
  ASSERT_EQ(A.buffer_alloc(other, 1024, &foreign), SY_OK);
  sy_tensor x_foreign = tensor(SY_DTYPE_F32, foreign, 0, {64, 2});

  const std::vector<int32_t> ids = {1, 50, 2};
  sy_tensor table = f32(rng.vec(16 * 50), {16, 50});
  sy_tensor rows3 = f32(std::vector<float>(16 * 3), {16, 3});
  sy_tensor rows4 = f32(std::vector<float>(16 * 4), {16, 4});
  sy_tensor itable = tensor(SY_DTYPE_I32, alloc(16 * 50 * 4), 0, {16, 50});
  sy_tensor norm_w = f32(rng.vec(32), {32}), norm_w64 = f32(rng.vec(64), {64});
  sy_tensor x_shift = tensor(SY_DTYPE_F32, x.buffer, 4, {63, 2});
  sy_tensor x_head = tensor(SY_DTYPE_F32, x.buffer, 0, {63, 2});
  sy_tensor heads = f32(rng.vec(64 * 2 * 3), {64, 2, 3});
  const std::vector<int32_t> pos = {0, 1, 2};
  sy_tensor a11 = f32(rng.vec(33), {11, 3}), b10 = f32(rng.vec(30), {10, 3});
  sy_tensor y11x2 = f32(std::vector<float>(22), {11, 2});

  // kv_store / attention fixtures: 4 blocks of 16 slots, width 2 heads * 8 dims.
  sy_tensor kc = f32(std::vector<float>(16 * 64), {16, 64}),
            vc = f32(std::vector<float>(16 * 64), {16, 64});
  sy_tensor kv2 = f32(rng.vec(16 * 2), {16, 2});
  const std::vector<int32_t> bad_slots = {3, 64};
  sy_kv_store_args kv = {sizeof kv, &kv2, &kv2, &kc, &vc, bad_slots.data()};
  sy_kv_store_args kv_short = kv;
  kv_short.struct_size = 4;
  sy_tensor q = f32(rng.vec(8 * 8 * 4), {8, 8, 4}),
            out = f32(std::vector<float>(8 * 8 * 4), {8, 8, 4});
  const std::vector<uint32_t> starts = {0, 2, 4}, starts_short = {0, 2, 3};
  const std::vector<int32_t> tpos = {0, 1, 16, 17}, tpos_far = {64, 1, 16, 17};
  const std::vector<int32_t> tables = {0, 1, 2, 3, 2, 99, 0, 0};  // seq 1 block 1 is bad
  const std::vector<int32_t> good_tables = {0, 1, 2, 3, 2, 3, 0, 0};
  auto attn = [&](uint32_t n_kv, const std::vector<uint32_t>& st, const std::vector<int32_t>& tp,
                  const std::vector<int32_t>& bt, float scale) {
    return sy_attention_args{sizeof(sy_attention_args),
                             &q,
                             &kc,
                             &vc,
                             &out,
                             n_kv,
                             2,
                             st.data(),
                             tp.data(),
                             bt.data(),
                             4,
                             16,
                             scale};
  };
  sy_attention_args at_kv3 = attn(3, starts, tpos, good_tables, 1.0f);
  sy_attention_args at_block = attn(2, starts, tpos, tables, 1.0f);
  sy_attention_args at_starts = attn(2, starts_short, tpos, good_tables, 1.0f);
  sy_attention_args at_far = attn(2, starts, tpos_far, good_tables, 1.0f);
  sy_attention_args at_nan = attn(2, starts, tpos, good_tables, NAN);
  sy_tensor kc_narrow = f32(std::vector<float>(12 * 64), {12, 64});
  sy_attention_args at_width = attn(2, starts, tpos, good_tables, 1.0f);
  at_width.k_cache = &kc_narrow;

  sy_tensor x_small = x;
  x_small.struct_size = 8;
  sy_tensor x_misaligned = tensor(SY_DTYPE_F32, big, 2, {64, 2});
  sy_tensor w_past_end = tensor(SY_DTYPE_F32, w64.buffer, 64, {64, 10});
  sy_tensor w_unknown = w64, w_i32 = w64;
  w_unknown.dtype = 16;  // IQ2_XXS: a ggml type no backend implements
  w_i32.dtype = SY_DTYPE_I32;
  sy_tensor y_wide = f32(std::vector<float>(22), {11, 2});
  sy_tensor y_rows3 = f32(std::vector<float>(30), {10, 3});
  sy_tensor w_neg = w64;
  w_neg.ne[1] = -3;
  sy_buffer_t b256 = alloc(256);
  std::vector<uint8_t> bytes(256);
  sy_buffer_t out_buf = nullptr;

  const std::vector<ErrorCase> cases = {
      {"K mismatch", SY_ERR_INVALID_ARG, "matmul: x has ne[0]=64 but w has ne[0]=32",
       [&] { return A.matmul(be, &x, &w, &y); }},
      {"weight dtype", SY_ERR_UNSUPPORTED, "matmul: weight dtype 16 not supported",
       [&] { return A.matmul(be, &x, &w_unknown, &y); }},
      {"I32 weight", SY_ERR_UNSUPPORTED, "matmul: weight dtype 26 not supported",
       [&] { return A.matmul(be, &x, &w_i32, &y); }},
      {"y width", SY_ERR_INVALID_ARG, "matmul: y has ne[0]=11 but w has ne[1]=10",
       [&] { return A.matmul(be, &x, &w64, &y_wide); }},
      {"y rows", SY_ERR_INVALID_ARG, "matmul: y has ne[1]=3 but x has ne[1]=2",
       [&] { return A.matmul(be, &x, &w64, &y_rows3); }},
      {"x dtype", SY_ERR_INVALID_ARG, "matmul: x has dtype 1 (F16), expected F32 (0)",
       [&] { return A.matmul(be, &xf16, &w64, &y); }},
      {"x NULL", SY_ERR_INVALID_ARG, "matmul: x is NULL",
       [&] { return A.matmul(be, nullptr, &w64, &y); }},
      {"struct_size", SY_ERR_INVALID_ARG,
       "matmul: x has struct_size 8, expected at least " + std::to_string(sizeof(sy_tensor)),
       [&] { return A.matmul(be, &x_small, &w64, &y); }},
      {"negative ne", SY_ERR_INVALID_ARG, "matmul: w has ne[1]=-3, expected >= 0",
       [&] { return A.matmul(be, &x, &w_neg, &y); }},
      {"past the end", SY_ERR_INVALID_ARG,
       "matmul: w needs 2560 bytes at offset 64 but its buffer has 2560",
       [&] { return A.matmul(be, &x, &w_past_end, &y); }},
      {"Q8_0 block", SY_ERR_INVALID_ARG,
       "matmul: w has ne[0]=48, not a multiple of the Q8_0 block size 32",
       [&] { return A.matmul(be, &x48, &q48, &y1); }},
      {"misaligned", SY_ERR_INVALID_ARG, "matmul: x data at offset 2 is not 4-byte aligned",
       [&] { return A.matmul(be, &x_misaligned, &w64, &y); }},
      {"y overlaps x", SY_ERR_INVALID_ARG, "matmul: y overlaps x",
       [&] { return A.matmul(be, &x_in_big, &w64, &y_in_big); }},
      {"foreign buffer", SY_ERR_INVALID_ARG,
       "matmul: x buffer is not a live buffer of this backend",
       [&] { return A.matmul(be, &x_foreign, &w64, &y); }},
      {"get_rows id", SY_ERR_INVALID_ARG, "get_rows: ids[1]=50 is out of range [0, 50)",
       [&] { return A.get_rows(be, &table, ids.data(), 3, &rows3); }},
      {"get_rows n", SY_ERR_INVALID_ARG, "get_rows: dst has ne[1]=4 but n=3",
       [&] { return A.get_rows(be, &table, ids.data(), 3, &rows4); }},
      {"get_rows ids NULL", SY_ERR_INVALID_ARG, "get_rows: ids is NULL",
       [&] { return A.get_rows(be, &table, nullptr, 3, &rows3); }},
      {"get_rows dtype", SY_ERR_UNSUPPORTED, "get_rows: table dtype 26 not supported",
       [&] { return A.get_rows(be, &itable, ids.data(), 3, &rows3); }},
      {"rms_norm w", SY_ERR_INVALID_ARG, "rms_norm: w has ne[0]=32 but x has ne[0]=64",
       [&] { return A.rms_norm(be, &x, &norm_w, 1e-5f, &x); }},
      {"rms_norm overlap", SY_ERR_INVALID_ARG, "rms_norm: y partially overlaps x",
       [&] {
         sy_tensor w63 = f32(rng.vec(63), {63});
         return A.rms_norm(be, &x_head, &w63, 1e-5f, &x_shift);
       }},
      {"rms_norm eps", SY_ERR_INVALID_ARG, "rms_norm: eps=-1 must be finite and >= 0",
       [&] { return A.rms_norm(be, &x, &norm_w64, -1.0f, &x); }},
      {"rope odd", SY_ERR_INVALID_ARG,
       "rope: n_rot=7 must be even, positive and at most head_dim=64",
       [&] { return A.rope(be, &heads, pos.data(), 7, 10000.0f, 1.0f, SY_ROPE_NORM); }},
      {"rope wide", SY_ERR_INVALID_ARG,
       "rope: n_rot=66 must be even, positive and at most head_dim=64",
       [&] { return A.rope(be, &heads, pos.data(), 66, 10000.0f, 1.0f, SY_ROPE_NEOX); }},
      {"rope mode", SY_ERR_UNSUPPORTED, "rope: mode 1 not supported",
       [&] { return A.rope(be, &heads, pos.data(), 32, 10000.0f, 1.0f, 1); }},
      {"rope pos", SY_ERR_INVALID_ARG, "rope: pos is NULL",
       [&] { return A.rope(be, &heads, nullptr, 32, 10000.0f, 1.0f, SY_ROPE_NORM); }},
      {"rope base", SY_ERR_INVALID_ARG, "rope: freq_base=0 must be finite and positive",
       [&] { return A.rope(be, &heads, pos.data(), 32, 0.0f, 1.0f, SY_ROPE_NORM); }},
      {"add shape", SY_ERR_INVALID_ARG, "add: b has ne[0]=10 but a has ne[0]=11",
       [&] { return A.add(be, &a11, &b10, &a11); }},
      {"swiglu y", SY_ERR_INVALID_ARG, "swiglu: y has ne[1]=2 but gate has ne[1]=3",
       [&] { return A.swiglu(be, &a11, &a11, &y11x2); }},
      {"softmax dtype", SY_ERR_INVALID_ARG, "softmax: x has dtype 1 (F16), expected F32 (0)",
       [&] { return A.softmax(be, &xf16, &x); }},
      {"kv_store slot", SY_ERR_INVALID_ARG, "kv_store: slots[1]=64 is out of range [0, 64)",
       [&] { return A.kv_store(be, &kv); }},
      {"kv_store NULL", SY_ERR_INVALID_ARG, "kv_store: args is NULL",
       [&] { return A.kv_store(be, nullptr); }},
      {"kv_store size", SY_ERR_INVALID_ARG,
       "kv_store: args has struct_size 4, expected at least " +
           std::to_string(sizeof(sy_kv_store_args)),
       [&] { return A.kv_store(be, &kv_short); }},
      {"attention GQA", SY_ERR_INVALID_ARG,
       "attention: n_kv_head=3 must be positive and divide n_head=8",
       [&] { return A.attention(be, &at_kv3); }},
      {"attention block", SY_ERR_INVALID_ARG,
       "attention: block_tables[5]=99 (sequence 1, block 1) is out of range [0, 4)",
       [&] { return A.attention(be, &at_block); }},
      {"attention starts", SY_ERR_INVALID_ARG, "attention: seq_token_start[2]=3 but q has 4 tokens",
       [&] { return A.attention(be, &at_starts); }},
      {"attention far", SY_ERR_INVALID_ARG,
       "attention: token_pos[0]=64 needs block 4 but max_blocks_per_seq=4",
       [&] { return A.attention(be, &at_far); }},
      {"attention scale", SY_ERR_INVALID_ARG, "attention: scale=nan must be finite",
       [&] { return A.attention(be, &at_nan); }},
      {"attention width", SY_ERR_INVALID_ARG,
       "attention: k_cache has ne[0]=12 but head_dim*n_kv_head=16",
       [&] { return A.attention(be, &at_width); }},
      {"write range", SY_ERR_INVALID_ARG,
       "buffer_write: 100 bytes at offset 200 exceed the buffer's size 256",
       [&] { return A.buffer_write(be, b256, 200, bytes.data(), 100); }},
      {"read dst", SY_ERR_INVALID_ARG, "buffer_read: dst is NULL",
       [&] { return A.buffer_read(be, b256, 0, nullptr, 16); }},
      {"read foreign", SY_ERR_INVALID_ARG,
       "buffer_read: buffer is not a live buffer of this backend",
       [&] { return A.buffer_read(be, foreign, 0, bytes.data(), 16); }},
      {"alloc out", SY_ERR_INVALID_ARG, "buffer_alloc: out is NULL",
       [&] { return A.buffer_alloc(be, 16, nullptr); }},
      {"alloc huge", SY_ERR_OUT_OF_MEMORY,
       "buffer_alloc: cannot allocate 9223372036854775807 bytes",
       [&] { return A.buffer_alloc(be, INT64_MAX, &out_buf); }},
      {"from_host ptr", SY_ERR_INVALID_ARG, "buffer_from_host: ptr is NULL",
       [&] { return A.buffer_from_host(be, nullptr, 16, &out_buf); }},
      {"device_info out", SY_ERR_INVALID_ARG, "device_info: out is NULL",
       [&] { return A.device_info(be, nullptr); }},
  };
  for (const ErrorCase& c : cases) {
    EXPECT_EQ(c.call(), c.status) << c.what;
    EXPECT_EQ(error(), c.message) << c.what;
  }
  EXPECT_EQ(out_buf, nullptr);  // failed calls leave *out untouched

  // Errors of calls without a handle go to last_error(NULL), per thread.
  EXPECT_EQ(A.matmul(nullptr, &x, &w64, &y), SY_ERR_INVALID_ARG);
  EXPECT_STREQ(A.last_error(nullptr), "matmul: backend is NULL");
  EXPECT_EQ(A.create(nullptr, 0, nullptr), SY_ERR_INVALID_ARG);
  EXPECT_STREQ(A.last_error(nullptr), "create: out is NULL");

  // The backend still works after failures, and a success leaves the last message alone.
  ASSERT_EQ(A.matmul(be, &x, &w64, &y), SY_OK) << error();
  EXPECT_EQ(error(), "device_info: out is NULL");

  A.buffer_free(other, foreign);
  A.destroy(other);
}

TEST_P(BackendOps, CreateParams) {
  const sy_param bad[] = {{"threads", "abc"}};
  const sy_param unknown[] = {{"no_such_param", "1"}};
  sy_backend_t b = nullptr;
  if (GetParam() == "cpu_onednn") {
    EXPECT_EQ(api_->create(bad, 1, &b), SY_ERR_INVALID_ARG);
    EXPECT_STREQ(api_->last_error(nullptr),
                 "create: param threads='abc' must be an integer in [1, 1024]");
    EXPECT_EQ(b, nullptr);
    // -1 names the measured crossover of each weight; nothing below it is a crossover.
    const sy_param below[] = {{"gemv_max_m", "-2"}};
    EXPECT_EQ(api_->create(below, 1, &b), SY_ERR_INVALID_ARG);
    EXPECT_STREQ(api_->last_error(nullptr),
                 "create: param gemv_max_m='-2' must be an integer in [-1, 1048576]");
    EXPECT_EQ(b, nullptr);
  }
  ASSERT_EQ(api_->create(unknown, 1, &b), SY_OK) << api_->last_error(nullptr);
  api_->destroy(b);
  const auto& log = sy::test::host_log();
  EXPECT_NE(std::find(log.begin(), log.end(),
                      GetParam() + ": create: ignoring unknown param 'no_such_param'"),
            log.end());
}

// The thread contract: different handles may be used from different threads at once.
TEST_P(BackendOps, HandlesOnSeveralThreadsAtOnce) {
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      const sy_backend_iface& A = *api_;
      sy_backend_t be = nullptr;
      if (A.create(nullptr, 0, &be) != SY_OK) {
        failures[i] = A.last_error(nullptr);
        return;
      }
      const uint32_t dtype = i % 2 ? SY_DTYPE_Q8_0 : SY_DTYPE_F32;
      const int64_t m = i < 2 ? 1 : 37, k = 256, n = 129;
      Rng rng(1000 + i);
      const auto wq = encode(dtype, rng.vec(k * n), k, n);
      const auto x = rng.vec(m * k);
      const auto ref = naive::matmul(x, m, k, naive::decode(dtype, wq.data(), k, n), n);
      std::vector<float> y(m * n);
      sy_buffer_t bx, bw, by;
      A.buffer_from_host(be, (void*)x.data(), x.size() * 4, &bx);
      A.buffer_from_host(be, (void*)wq.data(), wq.size(), &bw);
      A.buffer_from_host(be, y.data(), y.size() * 4, &by);
      sy_tensor tx = {sizeof(sy_tensor), SY_DTYPE_F32, bx, 0, {k, m, 1, 1}};
      sy_tensor tw = {sizeof(sy_tensor), dtype, bw, 0, {k, n, 1, 1}};
      sy_tensor ty = {sizeof(sy_tensor), SY_DTYPE_F32, by, 0, {n, m, 1, 1}};
      for (int rep = 0; rep < 20 && failures[i].empty(); ++rep) {
        std::fill(y.begin(), y.end(), NAN);
        // Results are the host's after synchronize (cpu_onednn queues decode matmuls).
        if (A.matmul(be, &tx, &tw, &ty) != SY_OK || A.synchronize(be) != SY_OK)
          failures[i] = A.last_error(be);
        else if (!close(y, ref.ref, ref.mag, kQuantTol, 0, &ref.act_q8))
          failures[i] = "wrong result";
      }
      for (sy_buffer_t b : {bx, bw, by}) A.buffer_free(be, b);
      A.destroy(be);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(failures[i], "") << "thread " << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendOps, ::testing::Values("cpu_ref", "cpu_onednn"),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Backends, Matmul, ::testing::Values("cpu_ref", "cpu_onednn"),
                         backend_name);

// The "threads" param: one thread and two give the reference result on every matmul path.
TEST(CpuOnednn, ThreadsParam) {
  const LoadedPlugin& p = LoadedPlugin::backend("cpu_onednn");
  const sy_backend_iface& A = p.iface();
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string("threads=") + threads);
    const sy_param params[] = {{"threads", threads}};
    sy_backend_t be = nullptr;
    ASSERT_EQ(A.create(params, 1, &be), SY_OK) << A.last_error(nullptr);
    for (uint32_t dtype : {(uint32_t)SY_DTYPE_F32, (uint32_t)SY_DTYPE_Q8_0})
      for (int64_t m : {1, 40}) {
        const int64_t k = 512, n = 200;
        Rng rng(m + dtype);
        const auto wq = encode(dtype, rng.vec(k * n), k, n);
        const auto x = rng.vec(m * k);
        sy_buffer_t bx, bw, by;
        ASSERT_EQ(A.buffer_from_host(be, (void*)x.data(), x.size() * 4, &bx), SY_OK);
        ASSERT_EQ(A.buffer_from_host(be, (void*)wq.data(), wq.size(), &bw), SY_OK);
        std::vector<float> y(m * n);
        ASSERT_EQ(A.buffer_from_host(be, y.data(), y.size() * 4, &by), SY_OK);
        sy_tensor tx = {sizeof(sy_tensor), SY_DTYPE_F32, bx, 0, {k, m, 1, 1}};
        sy_tensor tw = {sizeof(sy_tensor), dtype, bw, 0, {k, n, 1, 1}};
        sy_tensor ty = {sizeof(sy_tensor), SY_DTYPE_F32, by, 0, {n, m, 1, 1}};
        ASSERT_EQ(A.matmul(be, &tx, &tw, &ty), SY_OK) << A.last_error(be);
        ASSERT_EQ(A.synchronize(be), SY_OK) << A.last_error(be);
        const auto ref = naive::matmul(x, m, k, naive::decode(dtype, wq.data(), k, n), n);
        EXPECT_TRUE(close(y, ref.ref, ref.mag, dtype == SY_DTYPE_F32 ? kF32Tol : kQuantTol, 0,
                          dtype == SY_DTYPE_F32 ? nullptr : &ref.act_q8));
        for (sy_buffer_t b : {bx, bw, by}) A.buffer_free(be, b);
      }
    A.destroy(be);
  }
}

}  // namespace
