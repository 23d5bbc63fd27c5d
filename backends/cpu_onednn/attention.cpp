// kv_store and causal paged attention: OpenMP over (token, head), AVX2 within a head.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "onednn_backend.h"
#include "vec_math.h"

namespace sy::cpu_onednn {
namespace {

float dot(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8)
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  float s = hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y += a * x
void axpy(float a, const float* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * x[i];
}

}  // namespace

void OnednnBackend::kv_store(const KvStoreOp& op) {
  const int64_t kw = op.k.ne[0], vw = op.v.ne[0];
  for (int64_t t = 0; t < op.k.ne[1]; ++t) {
    std::memcpy(op.k_cache.f32() + op.slots[t] * kw, op.k.f32() + t * kw, kw * sizeof(float));
    std::memcpy(op.v_cache.f32() + op.slots[t] * vw, op.v.f32() + t * vw, vw * sizeof(float));
  }
}

void OnednnBackend::attention(const AttentionOp& op) {
  const int64_t head_dim = op.q.ne[0], n_head = op.q.ne[1], n_tokens = op.q.ne[2];
  const int64_t group = n_head / op.n_kv_head, kv_width = op.k_cache.ne[0];
  const int64_t bs = op.block_size;
  if (n_tokens == 0) return;
  // Sequence of every token and the longest context, so scratch is sized before the parallel
  // region (nothing may throw inside it).
  std::vector<uint32_t> seq_of(n_tokens);
  int64_t max_len = 0;
  for (uint32_t s = 0; s < op.n_seqs; ++s)
    for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
      seq_of[t] = s;
      max_len = std::max<int64_t>(max_len, (int64_t)op.token_pos[t] + 1);
    }
  const int team = threads_;
  scratch_.resize((size_t)(team * max_len));
  const int64_t items = n_tokens * n_head;
  // Dynamic: a long decode and a short prefill token differ in cost by the context length.
#pragma omp parallel for schedule(dynamic, 1) \
    num_threads(team) if (items > 1 && items * max_len * head_dim >= (1 << 15))
  for (int64_t it = 0; it < items; ++it) {
    const int64_t t = it / n_head, h = it % n_head;
    const int32_t* table = op.block_tables + (size_t)seq_of[t] * op.max_blocks_per_seq;
    const int64_t len = (int64_t)op.token_pos[t] + 1;  // causal: positions [0, pos]
    const int64_t kv_off = (h / group) * head_dim;
    const float* q = op.q.f32() + it * head_dim;
    float* score = scratch_.data() + (size_t)omp_get_thread_num() * max_len;
    float mx = -INFINITY;
    for (int64_t p0 = 0; p0 < len; p0 += bs) {
      const float* kb = op.k_cache.f32() + (int64_t)table[p0 / bs] * bs * kv_width + kv_off;
      for (int64_t j = 0; j < std::min(bs, len - p0); ++j) {
        score[p0 + j] = dot(q, kb + j * kv_width, head_dim) * op.scale;
        mx = std::max(mx, score[p0 + j]);
      }
    }
    // Numerically stable softmax: exponents relative to the row's max.
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 vsum = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= len; p += 8) {
      const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(score + p), vm));
      vsum = _mm256_add_ps(vsum, e);
      _mm256_storeu_ps(score + p, e);
    }
    float sum = hsum(vsum);
    for (; p < len; ++p) sum += score[p] = std::exp(score[p] - mx);
    float* out = op.out.f32() + it * head_dim;
    std::fill(out, out + head_dim, 0.0f);
    for (int64_t p0 = 0; p0 < len; p0 += bs) {
      const float* vb = op.v_cache.f32() + (int64_t)table[p0 / bs] * bs * kv_width + kv_off;
      for (int64_t j = 0; j < std::min(bs, len - p0); ++j)
        axpy(score[p0 + j], vb + j * kv_width, out, head_dim);
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < head_dim; ++i) out[i] *= inv;
  }
}

}  // namespace sy::cpu_onednn
