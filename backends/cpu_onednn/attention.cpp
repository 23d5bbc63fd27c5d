// kv_store and causal paged attention, flash-attention style: a work item is a tile of query
// tokens of one sequence times the query heads of one KV head; it walks the sequence's keys in
// tiles gathered from the paged cache (F32 or F16) into contiguous F32 scratch, and the path's
// tile kernel keeps an online softmax, so no score row of the full context is ever stored.
// A one-token query (a decoding token, or a prompt's last tile of one token) reads the cache in
// place instead, every head at once: its few rows cannot pay for the gather and transpose of
// every key tile. Its keys are split into spans on several threads (split-K, as flash-decoding
// does), whose partial softmax results merge exactly afterwards, so one long sequence keeps
// every core busy. A sliding window (ABI 1.5) only narrows each query's keys to
// [max(0, p - window + 1), p]: a tile walks the union of its rows' ranges, masking each row's
// own ends; a one-token query's spans cover its range alone.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "onednn_backend.h"

namespace sy::cpu_onednn {
namespace {

// Query rows per work item (tokens x heads of a group): the key tiles gathered for an item are
// reused by this many rows, and its scratch stays in L2.
constexpr int64_t kTileRows = 64;

// Keys per decode span: enough spans for about four per thread over the batch's decoding
// tokens, each at least kMinSpan keys (a span pays for its softmax and merge) and at most
// kMaxSpan (its scores stay in L1/L2), a whole number of cache blocks.
constexpr int64_t kMinSpan = 128, kMaxSpan = 512;

int64_t decode_span_keys(int64_t decode_keys, int threads, int64_t block_size) {
  int64_t span = (decode_keys + 4 * threads - 1) / (4 * threads);
  span = std::clamp<int64_t>(span, kMinSpan, kMaxSpan);
  return std::max<int64_t>(1, span / block_size) * block_size;
}

// Spans of keys [k0, k1) split at multiples of `span` (so they stay whole cache blocks).
int64_t span_count(int64_t k0, int64_t k1, int64_t span) {
  return (k1 - 1) / span - k0 / span + 1;
}
int64_t span_end(int64_t k0, int64_t k1, int64_t span) {
  return std::min(k1, (k0 / span + 1) * span);
}

// out = the spans' outputs of each of `rows` heads weighted by their share of the softmax sum:
// l e^(m - max m), over the sum of those and of the head's sink (a span of l 1, no value).
void merge_spans(const float* parts, int64_t spans, int64_t rows, int64_t d, const float* sinks,
                 float* out) {
  const int64_t stride = rows * (d + 2);
  for (int64_t r = 0; r < rows; ++r) {
    float mx = sinks ? sinks[r] : -INFINITY;
    for (int64_t i = 0; i < spans; ++i) mx = std::max(mx, parts[i * stride + rows * d + r]);
    float total = sinks ? std::exp(sinks[r] - mx) : 0.0f;
    for (int64_t c = 0; c < d; ++c) out[r * d + c] = 0.0f;
    for (int64_t i = 0; i < spans; ++i) {
      const float* p = parts + i * stride;
      const float w = p[rows * d + rows + r] * std::exp(p[rows * d + r] - mx);
      total += w;
      for (int64_t c = 0; c < d; ++c) out[r * d + c] += w * p[r * d + c];
    }
    for (int64_t c = 0; c < d; ++c) out[r * d + c] /= total;
  }
}

}  // namespace

void OnednnBackend::kv_store(const KvStoreOp& op) {
  const int64_t kw = op.k.ne[0], vw = op.v.ne[0], n = op.k.ne[1];
  const bool f16 = op.k_cache.dtype == SY_DTYPE_F16;
  for_each(n, n * kw >= (1 << 16), [&](int64_t t) {
    const int64_t s = op.slots[t];
    if (f16) {
      kernels_.f32_to_f16(op.k.f32() + t * kw, static_cast<uint16_t*>(op.k_cache.data) + s * kw,
                          kw);
      kernels_.f32_to_f16(op.v.f32() + t * vw, static_cast<uint16_t*>(op.v_cache.data) + s * vw,
                          vw);
    } else {
      std::memcpy(op.k_cache.f32() + s * kw, op.k.f32() + t * kw, kw * sizeof(float));
      std::memcpy(op.v_cache.f32() + s * vw, op.v.f32() + t * vw, vw * sizeof(float));
    }
  });
}

void OnednnBackend::attention(const AttentionOp& op) {
  const int64_t d = op.q.ne[0], n_head = op.q.ne[1], n_tokens = op.q.ne[2];
  if (n_tokens == 0 || d == 0) return;
  const int64_t n_kv = op.n_kv_head, group = n_head / n_kv, width = op.k_cache.ne[0];
  const int64_t bs = op.block_size, bk = kernels_.attn_keys, vf = kernels_.vec_floats;
  const int64_t dp = (d + vf - 1) / vf * vf;
  const int64_t tile_tokens = std::max<int64_t>(1, kTileRows / group);
  const int64_t max_rows = tile_tokens * group;
  const bool f16 = op.k_cache.dtype == SY_DTYPE_F16;
  // The first key position token t sees.
  auto first_key = [&](int64_t t) -> int64_t {
    return op.window ? std::max<int64_t>(0, (int64_t)op.token_pos[t] - op.window + 1) : 0;
  };

  // Work items: a prompt's query tiles of several tokens, the latest (longest context) first,
  // then each one-token query (a decoding token, or a prompt's last tile of one token) as spans
  // of its keys, sized once every such query is known; the pool hands items out in order, so the
  // short spans fill in behind the long tiles.
  attn_items_.clear();
  attn_one_token_.clear();
  int64_t one_token_keys = 0;
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    const int64_t b = op.seq_token_start[s], e = op.seq_token_start[s + 1];
    for (int64_t t0 = b + (e - b - 1) / tile_tokens * tile_tokens; t0 >= b; t0 -= tile_tokens) {
      const int64_t count = std::min(tile_tokens, e - t0);
      if (count == 1) {
        const int64_t k0 = first_key(t0), k1 = op.token_pos[t0] + 1;
        attn_one_token_.push_back({s, t0, 1, 0, k0, k1, -1});
        one_token_keys += k1 - k0;
        continue;
      }
      for (int64_t h = 0; h < n_kv; ++h) attn_items_.push_back({s, t0, count, h, 0, 0, -1});
    }
  }
  const int64_t span = decode_span_keys(one_token_keys, threads_, bs);
  int64_t parts = 0;
  for (const AttnItem& w : attn_one_token_) {
    const bool split = span_count(w.k0, w.k1, span) > 1;
    for (int64_t k0 = w.k0; k0 < w.k1; k0 = span_end(k0, w.k1, span))
      attn_items_.push_back(
          {w.seq, w.t0, 1, 0, k0, span_end(k0, w.k1, span), split ? parts++ : -1});
  }
  // Per thread: q tile, K^T tile, V tile, scores, o, then corr, m, l and a converted key row;
  // a decode span instead keeps every head's q, scores over the span, m and l.
  const int64_t floats = std::max(
      max_rows * dp + dp * bk + bk * dp + max_rows * bk + max_rows * dp + 3 * max_rows + dp,
      n_head * (d + span + 2));
  attn_scratch_.resize((size_t)(threads_ * floats));
  attn_valid_.resize((size_t)(threads_ * 2 * max_rows));
  attn_parts_.resize((size_t)(parts * n_head * (d + 2)));

  pool_.run((int64_t)attn_items_.size(), [&](int64_t item, int thread) {
    const AttnItem& w = attn_items_[item];
    const int64_t rows = w.count * group;
    float* q = attn_scratch_.data() + thread * floats;
    float* kt = q + max_rows * dp;
    float* v = kt + dp * bk;
    float* sc = v + bk * dp;
    float* o = sc + max_rows * bk;
    float* corr = o + max_rows * dp;
    float* m = corr + max_rows;
    float* l = m + max_rows;
    float* krow = l + max_rows;
    int32_t* valid = attn_valid_.data() + thread * 2 * max_rows;
    int32_t* skip = valid + max_rows;
    const int32_t* table = op.block_tables + (size_t)w.seq * op.max_blocks_per_seq;
    const int64_t kv_off = w.kv_head * d;

    if (w.count == 1) {  // one token: its heads are contiguous in q and out
      const int64_t h0 = w.t0 * n_head * d;
      for (int64_t i = 0; i < n_head * d; ++i) q[i] = op.q.f32()[h0 + i] * op.scale;
      float* part = w.part >= 0 ? attn_parts_.data() + w.part * n_head * (d + 2) : nullptr;
      float* ml = part ? part + n_head * d : q + n_head * (d + w.k1 - w.k0);
      const kernels::AttnDecodeArgs a{n_kv,
                                      group,
                                      d,
                                      q,
                                      op.k_cache.data,
                                      op.v_cache.data,
                                      f16,
                                      width,
                                      table,
                                      bs,
                                      w.k0,
                                      w.k1,
                                      q + n_head * d,
                                      part ? part : op.out.f32() + h0,
                                      ml,
                                      ml + n_head,
                                      op.softcap};
      kernels_.attn_decode(a);
      // A sink adds e^(sink - m) to each head's sum l: out = acc / l becomes acc / (l + that).
      // A split query's spans merge with the sink below instead.
      if (op.sinks && !part)
        for (int64_t h = 0; h < n_head; ++h) {
          const float l = ml[n_head + h], f = l / (l + std::exp(op.sinks[h] - ml[h]));
          for (int64_t i = 0; i < d; ++i) op.out.f32()[h0 + h * d + i] *= f;
        }
      return;
    }

    // The keys any row attends to: [first, last].
    int64_t first = INT64_MAX, last = 0;
    for (int64_t i = 0; i < w.count; ++i) {
      first = std::min(first, first_key(w.t0 + i));
      last = std::max<int64_t>(last, op.token_pos[w.t0 + i]);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = w.t0 + r / group, h = w.kv_head * group + r % group;
      const float* src = op.q.f32() + (t * n_head + h) * d;
      for (int64_t i = 0; i < d; ++i) q[r * dp + i] = src[i] * op.scale;
      std::fill(q + r * dp + d, q + (r + 1) * dp, 0.0f);
      // A sink starts the softmax as a key of logit sinks[h] and no value.
      m[r] = op.sinks ? op.sinks[h] : -INFINITY;
      l[r] = op.sinks ? 1.0f : 0.0f;
    }
    std::fill(o, o + rows * dp, 0.0f);
    std::fill(kt + d * bk, kt + dp * bk, 0.0f);  // padded head dims contribute nothing

    kernels::AttnTileArgs a{rows, dp, q, valid, skip, kt, v, 0, sc, corr, m, l, o, op.softcap};
    for (int64_t p0 = first; p0 <= last; p0 += bk) {
      const int64_t n_keys = std::min(bk, last + 1 - p0);
      for (int64_t j = 0; j < n_keys; ++j) {
        const int64_t p = p0 + j, slot = (int64_t)table[p / bs] * bs + p % bs;
        const float *ks, *vs;
        if (f16) {
          kernels_.f16_to_f32(static_cast<const uint16_t*>(op.k_cache.data) + slot * width + kv_off,
                              krow, d);
          kernels_.f16_to_f32(static_cast<const uint16_t*>(op.v_cache.data) + slot * width + kv_off,
                              v + j * dp, d);
          ks = krow;
          vs = nullptr;
        } else {
          ks = op.k_cache.f32() + slot * width + kv_off;
          vs = op.v_cache.f32() + slot * width + kv_off;
        }
        for (int64_t i = 0; i < d; ++i) kt[i * bk + j] = ks[i];
        if (vs) std::memcpy(v + j * dp, vs, d * sizeof(float));
        std::fill(v + j * dp + d, v + (j + 1) * dp, 0.0f);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = w.t0 + r / group;
        valid[r] = (int32_t)std::clamp<int64_t>(op.token_pos[t] - p0 + 1, 0, n_keys);
        skip[r] = (int32_t)std::clamp<int64_t>(first_key(t) - p0, 0, n_keys);
      }
      a.n_keys = n_keys;
      kernels_.attn_tile(a);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = w.t0 + r / group, h = w.kv_head * group + r % group;
      float* dst = op.out.f32() + (t * n_head + h) * d;
      const float inv = 1.0f / l[r];
      for (int64_t i = 0; i < d; ++i) dst[i] = o[r * dp + i] * inv;
    }
  });

  // Each split one-token query: its spans' partial results, consecutive in attn_parts_ in the
  // order they were numbered above, merge.
  int64_t part = 0;
  for (const AttnItem& w : attn_one_token_) {
    const int64_t spans = span_count(w.k0, w.k1, span);
    if (spans <= 1) continue;
    merge_spans(attn_parts_.data() + part * n_head * (d + 2), spans, n_head, d, op.sinks,
                op.out.f32() + w.t0 * n_head * d);
    part += spans;
  }
}

}  // namespace sy::cpu_onednn
