// kv_store and causal paged attention, one (token, head) at a time with double accumulators.
// An F16 cache stores rows rounded to nearest even and is read back exactly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ref_backend.h"
#include "switchyard/common/dtype.h"

namespace sy::cpu_ref {
namespace {

// Row `row` of a cache tensor, `n` values from column `col`, as F32.
void cache_row(const Tensor& cache, int64_t row, int64_t col, int64_t n, float* out) {
  const int64_t width = cache.ne[0];
  if (cache.dtype == SY_DTYPE_F16) {
    const uint16_t* p = static_cast<const uint16_t*>(cache.data) + row * width + col;
    for (int64_t i = 0; i < n; ++i) out[i] = dtype::f16_to_f32(p[i]);
  } else {
    std::memcpy(out, cache.f32() + row * width + col, (size_t)n * sizeof(float));
  }
}

void store_row(const Tensor& cache, int64_t row, const float* src) {
  const int64_t width = cache.ne[0];
  if (cache.dtype == SY_DTYPE_F16) {
    uint16_t* p = static_cast<uint16_t*>(cache.data) + row * width;
    for (int64_t i = 0; i < width; ++i) p[i] = dtype::f32_to_f16(src[i]);
  } else {
    std::memcpy(cache.f32() + row * width, src, (size_t)width * sizeof(float));
  }
}

}  // namespace

void RefBackend::kv_store(const KvStoreOp& op) {
  const int64_t kw = op.k.ne[0], vw = op.v.ne[0];
  for (int64_t t = 0; t < op.k.ne[1]; ++t) {
    store_row(op.k_cache, op.slots[t], op.k.f32() + t * kw);
    store_row(op.v_cache, op.slots[t], op.v.f32() + t * vw);
  }
}

void RefBackend::attention(const AttentionOp& op) {
  const int64_t head_dim = op.q.ne[0], n_head = op.q.ne[1];
  const int64_t group = n_head / op.n_kv_head;
  std::vector<double> score, acc(head_dim);
  std::vector<float> k(head_dim), v(head_dim);
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    const int32_t* table = op.block_tables + (size_t)s * op.max_blocks_per_seq;
    for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
      const int64_t len = (int64_t)op.token_pos[t] + 1;  // causal: positions [0, pos]
      // A sliding window hides the positions before [pos - window + 1, pos].
      const int64_t first = op.window ? std::max<int64_t>(0, len - op.window) : 0;
      score.assign(len, 0.0);
      for (int64_t h = 0; h < n_head; ++h) {
        const float* q = op.q.f32() + (t * n_head + h) * head_dim;
        const int64_t kv_off = (h / group) * head_dim;
        // A sink joins the softmax as a key without a value (its logit is not scaled).
        const double sink = op.sinks ? (double)op.sinks[h] : -INFINITY;
        double mx = sink;
        for (int64_t p = first; p < len; ++p) {
          const int64_t slot =
              (int64_t)table[p / op.block_size] * op.block_size + p % op.block_size;
          cache_row(op.k_cache, slot, kv_off, head_dim, k.data());
          double dot = 0.0;
          for (int64_t i = 0; i < head_dim; ++i) dot += (double)q[i] * k[i];
          score[p] = dot * op.scale;
          if (op.softcap != 0.0f) score[p] = op.softcap * std::tanh(score[p] / op.softcap);
          mx = std::fmax(mx, score[p]);
        }
        double sum = op.sinks ? std::exp(sink - mx) : 0.0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t p = first; p < len; ++p) {
          const int64_t slot =
              (int64_t)table[p / op.block_size] * op.block_size + p % op.block_size;
          cache_row(op.v_cache, slot, kv_off, head_dim, v.data());
          const double e = std::exp(score[p] - mx);
          sum += e;
          for (int64_t i = 0; i < head_dim; ++i) acc[i] += e * v[i];
        }
        float* out = op.out.f32() + (t * n_head + h) * head_dim;
        for (int64_t i = 0; i < head_dim; ++i) out[i] = (float)(acc[i] / sum);
      }
    }
  }
}

}  // namespace sy::cpu_ref
