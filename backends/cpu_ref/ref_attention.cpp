// kv_store and causal paged attention, one (token, head) at a time with double accumulators.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ref_backend.h"

namespace sy::cpu_ref {

void RefBackend::kv_store(const KvStoreOp& op) {
  const int64_t kw = op.k.ne[0], vw = op.v.ne[0];
  for (int64_t t = 0; t < op.k.ne[1]; ++t) {
    std::memcpy(op.k_cache.f32() + op.slots[t] * kw, op.k.f32() + t * kw, kw * sizeof(float));
    std::memcpy(op.v_cache.f32() + op.slots[t] * vw, op.v.f32() + t * vw, vw * sizeof(float));
  }
}

void RefBackend::attention(const AttentionOp& op) {
  const int64_t head_dim = op.q.ne[0], n_head = op.q.ne[1];
  const int64_t group = n_head / op.n_kv_head;
  const int64_t kv_width = op.k_cache.ne[0];
  std::vector<double> score, acc(head_dim);
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    const int32_t* table = op.block_tables + (size_t)s * op.max_blocks_per_seq;
    for (uint32_t t = op.seq_token_start[s]; t < op.seq_token_start[s + 1]; ++t) {
      const int64_t len = (int64_t)op.token_pos[t] + 1;  // causal: positions [0, pos]
      score.assign(len, 0.0);
      for (int64_t h = 0; h < n_head; ++h) {
        const float* q = op.q.f32() + (t * n_head + h) * head_dim;
        const int64_t kv_off = (h / group) * head_dim;
        double mx = -INFINITY;
        for (int64_t p = 0; p < len; ++p) {
          const int64_t slot =
              (int64_t)table[p / op.block_size] * op.block_size + p % op.block_size;
          const float* k = op.k_cache.f32() + slot * kv_width + kv_off;
          double dot = 0.0;
          for (int64_t i = 0; i < head_dim; ++i) dot += (double)q[i] * k[i];
          score[p] = dot * op.scale;
          mx = std::fmax(mx, score[p]);
        }
        double sum = 0.0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t p = 0; p < len; ++p) {
          const int64_t slot =
              (int64_t)table[p / op.block_size] * op.block_size + p % op.block_size;
          const float* v = op.v_cache.f32() + slot * kv_width + kv_off;
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
