// Factory, matmul dispatch and get_rows.
#include "onednn_backend.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/packed_layouts.h"
#include "switchyard/common/dtype.h"

namespace sy::cpu_onednn {
namespace {

// Largest M the GEMV kernels take for a weight; above it the oneDNN GEMM on dequantised panels is
// faster. Measured with `switchyard bench-backend --crossover` (one thread on Zen 5, K x N =
// 768 x 2816 and 2816 x 768; see the backend's README section):
// - packed weights (8-bit activations, every row of a group per vector) stay ahead at every M,
//   so their kernels are prefill's GEMM too: 1.9x to 2.5x the GEMM at M = 512 with VNNI, Q4_0
//   1.2x on the AVX2 path against oneDNN's AVX2 GEMM;
// - plain weights on the AVX-512 VNNI path: Q8_0, Q4_0, Q4_K, IQ4_NL and MXFP4 stay ahead too
//   (1.5x to 2.7x at M = 256), the other super-block types meet the GEMM between M = 48 and 128,
//   the offset 32-value types, F16 and BF16 near 8;
// - elsewhere, and with the compute-bound int16 activations (act_bits = 16), near 8 (F32: 4).
int64_t default_gemv_max_m(const plugin::Tensor& w, CpuPath path, bool act8) {
  if (w.packed) return std::numeric_limits<int64_t>::max();
  if (w.dtype == SY_DTYPE_F32) return 4;
  if (path != CpuPath::avx512_vnni || !act8) return 8;
  switch (w.dtype) {
    case SY_DTYPE_Q8_0:
    case SY_DTYPE_Q4_0:
    case SY_DTYPE_Q4_K:
    case SY_DTYPE_IQ4_NL:
    case SY_DTYPE_MXFP4:
      return std::numeric_limits<int64_t>::max();
    case SY_DTYPE_Q2_K:
      return 128;
    case SY_DTYPE_Q6_K:
      return 96;
    case SY_DTYPE_Q3_K:
      return 64;
    case SY_DTYPE_Q5_K:
    case SY_DTYPE_IQ4_XS:
      return 48;
    default:  // F16, BF16, Q4_1, Q5_0, Q5_1
      return 8;
  }
}

// A GEMV task streams at least this many weight bytes: below it, claiming costs more than the
// parallelism brings.
constexpr int64_t kGemvTaskBytes = 32 << 10;
// GEMM column slices: at least this wide, and a dequantised slice at most this many values
// (512 KiB, so it stays in L2 while the GEMM reads it).
constexpr int64_t kMinSlice = 64;
constexpr int64_t kPanelValues = 128 * 1024;

}  // namespace

std::unique_ptr<plugin::Backend> make_backend(const BackendOptions& opt) {
  return std::make_unique<OnednnBackend>(opt);
}

OnednnBackend::OnednnBackend(const BackendOptions& opt)
    : threads_(opt.threads),
      gemv_max_m_(opt.gemv_max_m),
      act_bits_(opt.act_bits),
      repack_(opt.repack),
      kernels_(kernels::table_for(opt.path)),
      pool_(opt.threads),
      gemm_(opt.threads),
      panels_(opt.threads) {}

int64_t OnednnBackend::gemv_max_m(const Tensor& w) const {
  return gemv_max_m_ >= 0 ? gemv_max_m_ : default_gemv_max_m(w, kernels_.path, act_bits_ == 8);
}

// Small M (decode), and any M of the dtypes whose integer kernels win: the path's GEMV kernel,
// weights streamed once in their own dtype, queued until something reads the output (flush).
// Larger M of the others: the oneDNN GEMM, at once.
void OnednnBackend::matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = w.ne[0], m = x.rows();
  if (m <= gemv_max_m(w) && k > 0)
    if (const kernels::GemvEntry* g = kernels_.find_gemv(w.dtype)) return queue_gemv(*g, x, w, y);
  flush();
  if (k == 0) {  // an empty sum; oneDNN rejects zero-sized reductions
    std::memset(y.data, 0, (size_t)(m * w.ne[1]) * sizeof(float));
    return;
  }
  gemm(x, w, y);
}

uint64_t OnednnBackend::packed_size(const Tensor& w) {
  const kernels::GemvEntry* g = kernels_.find_gemv(w.dtype);
  if (!repack_ || act_bits_ != 8 || !g || !g->fn8_packed || !kernels::has_packed_layout(w.dtype) ||
      w.ne[1] < kernels::kPackRows)
    return 0;
  return (uint64_t)(dtype::row_bytes(w.dtype, w.ne[0]) * w.ne[1]);
}

// Whole groups of kPackRows rows pack independently, so the groups are split over the pool: a
// real file's load is mostly this (half the samples of loading Llama 3.2 1B's shape in Q4_K_M).
// The last share also copies the rows after the last whole group.
void OnednnBackend::pack_weight(const Tensor& w, void* dst) {
  const int64_t k = w.ne[0], n = w.ne[1], groups = n / kernels::kPackRows;
  const int64_t row = dtype::row_bytes(w.dtype, k);
  const uint8_t* src = w.bytes();
  pool_.parallel_for(groups, 8, [&](int64_t g0, int64_t g1, int) {
    const int64_t r0 = g0 * kernels::kPackRows, r1 = g1 == groups ? n : g1 * kernels::kPackRows;
    kernels::pack_rows(w.dtype, src + r0 * row, static_cast<uint8_t*>(dst) + r0 * row, k, r1 - r0);
  });
}

void OnednnBackend::flush() {
  gemvs_.run(pool_, kGemvTaskBytes);
}

// Prepares the activations now (x may change once the caller moves on), or takes those of a
// queued GEMV of the same input: q, k and v quantize their input once.
void OnednnBackend::queue_gemv(const kernels::GemvEntry& g, const Tensor& x, const Tensor& w,
                               const Tensor& y) {
  if (!gemvs_.can_join(x, y)) flush();
  const int64_t k = w.ne[0], n = w.ne[1], m = x.rows();
  kernels::GemvArgs a{};
  a.x = x.f32();
  a.m = m, a.k = k;
  a.w = w.bytes();
  a.row_bytes = dtype::row_bytes(w.dtype, k);
  a.y = y.f32(), a.ldy = n;
  const bool q8 = act_bits_ == 8 && g.fn8;
  if (w.packed) a.packed_rows = kernels::packed_rows(n);
  const int block_bias = w.packed ? g.packed_bias : 0;
  const ActKey key{x.data, m, k, q8 ? g.act8 : g.act, q8 ? g.bias8 : 0, block_bias};
  if (key.act != kernels::ActFormat::f32 && !gemvs_.share_acts(key, a)) {
    ActBuffers& buf = gemvs_.next_acts();
    if (q8) {
      const int block = kernels::q8_block(g.act8);
      buf.q8.resize((size_t)(m * k));
      buf.d.resize((size_t)(m * k / block));
      buf.s.resize((size_t)(m * k / kernels::kActGroup));
      for_each(m, m * k >= (1 << 16), [&](int64_t r) {
        kernels_.quantize_q8(x.f32() + r * k, 1, k, block, buf.q8.data() + r * k,
                             buf.d.data() + r * (k / block),
                             buf.s.data() + r * (k / kernels::kActGroup));
      });
      a.q8 = buf.q8.data();
      if (g.bias8) {
        buf.bias8.resize((size_t)(m * k / 4));
        kernels_.bias_starts(buf.q8.data(), m * k, 4, g.bias8, buf.bias8.data());
        a.bias8 = buf.bias8.data();
      }
      if (block_bias) {
        buf.block_starts.resize((size_t)(m * k / 32));
        kernels_.bias_starts(buf.q8.data(), m * k, 32, block_bias, buf.block_starts.data());
        a.block_starts = buf.block_starts.data();
      }
    } else {
      buf.q.resize((size_t)(m * k));
      buf.d.resize((size_t)(m * kernels::act_blocks(k)));
      buf.s.resize((size_t)(m * k / kernels::kActGroup));
      for_each(m, m * k >= (1 << 16), [&](int64_t r) {
        kernels_.quantize_q16(x.f32() + r * k, 1, k, buf.q.data() + r * k,
                              buf.d.data() + r * kernels::act_blocks(k),
                              buf.s.data() + r * (k / kernels::kActGroup));
      });
      a.q = buf.q.data();
    }
    a.d = buf.d.data();
    a.s = buf.s.data();
  }
  gemvs_.add(w.packed ? g.fn8_packed : q8 ? g.fn8 : g.fn, a, n, key, y);
}

void OnednnBackend::gemm(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = w.ne[0], n = w.ne[1], m = x.rows();
  const bool f32 = w.dtype == SY_DTYPE_F32;
  // About four slices per thread (a stalled thread leaves the others work to take), a multiple
  // of 16 columns wide.
  int64_t slice = std::max(kMinSlice, (n + 4 * threads_ - 1) / (4 * threads_));
  if (!f32) slice = std::min(slice, std::max<int64_t>(16, kPanelValues / k));
  slice = std::min(n, (slice + 15) / 16 * 16);
  const int64_t tasks = (n + slice - 1) / slice;
  if (!f32)
    for (auto& p : panels_) p.resize((size_t)(slice * k));
  const int64_t row_bytes = dtype::row_bytes(w.dtype, k);
  // Rows of packed groups dequantise from the group (packed_layouts.h), the others from their row.
  const int64_t packed_rows = w.packed ? kernels::packed_rows(n) : 0;
  const kernels::GemvEntry* g = w.packed ? kernels_.find_gemv(w.dtype) : nullptr;
  pool_.run(tasks, [&](int64_t t, int thread) {
    const int64_t j0 = t * slice, cols = std::min(slice, n - j0);
    const float* wp = f32 ? w.f32() + j0 * k : panels_[thread].data();
    // A slice starts on a group (slices are multiples of 16 wide) and holds its groups whole.
    for (int64_t j = 0; !f32 && j < cols;) {
      const int64_t row = j0 + j;
      float* dst = panels_[thread].data() + j * k;
      if (row < packed_rows) {
        g->dequant_packed(w.bytes() + row * row_bytes, k, dst, k);
        j += kernels::kPackRows;
      } else {
        kernels_.dequant_row(w.dtype, w.bytes() + row * row_bytes, dst, k);
        ++j;
      }
    }
    gemm_[thread].run(m, k, cols, n, x.f32(), wp, y.f32() + j0);
  });
}

void OnednnBackend::get_rows(const Tensor& table, const int32_t* ids, const Tensor& dst) {
  const int64_t k = table.ne[0], rows = dst.ne[1];
  const int64_t row_bytes = dtype::row_bytes(table.dtype, k);
  for_each(rows, rows * k >= (1 << 16), [&](int64_t i) {
    kernels_.dequant_row(table.dtype, table.bytes() + ids[i] * row_bytes, dst.f32() + i * k, k);
  });
}

}  // namespace sy::cpu_onednn
