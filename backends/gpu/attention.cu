// kv_store and causal attention over the paged KV cache. A sequence with one token in the batch
// (decode) gets one block per (token, head) whose warps split the context positions; a sequence
// with several tokens (prefill) gets blocks of kTileQ consecutive tokens, one warp per token, that
// share each chunk of keys and values through shared memory. Both use an online softmax in F32.
// The cache is F32 or F16 (KV below: float or uint16_t); F16 values are converted on load. A
// sliding window (1.5) only moves where each token's positions start: neither kernel reads a
// position outside the windows of its tokens.
#include <vector>

#include "device_common.cuh"
#include "dispatch.h"
#include "gpu_backend.h"

namespace sy::gpu {
namespace {

constexpr int kMaxHeadDim = 256;
constexpr int kPerLane = kMaxHeadDim / SY_WARP;  // head dims each lane owns: d = lane + i*WARP
constexpr int kDecodeWarps = 8;
constexpr int kTileQ = 4;     // prefill tokens per block
constexpr int kChunk = 16;    // prefill positions per shared-memory chunk
constexpr int kTileInts = 5;  // a prefill tile: first token, tokens, sequence, positions [lo, hi)

// The first position a query at len - 1 sees: 0, or the start of its window.
__host__ __device__ __forceinline__ int window_start(int len, int window) {
  return window != 0 && len > window ? len - window : 0;
}

struct Paging {
  const int32_t* tables;  // n_seqs rows of max_blocks
  int max_blocks, block_size;
  __device__ int64_t slot(int seq, int p) const {
    return (int64_t)tables[(int64_t)seq * max_blocks + p / block_size] * block_size +
           p % block_size;
  }
};

// A score after Gemma 2's logit soft-capping (cap 0: none).
__device__ __forceinline__ float capped(float s, float cap) {
  return cap != 0.0f ? cap * tanhf(s / cap) : s;
}

__device__ __forceinline__ float kv_get(const float* p, int64_t i) {
  return p[i];
}
__device__ __forceinline__ float kv_get(const uint16_t* p, int64_t i) {
  return sy_half_to_float(p[i]);
}
__device__ __forceinline__ void kv_put(float* p, int64_t i, float v) {
  p[i] = v;
}
__device__ __forceinline__ void kv_put(uint16_t* p, int64_t i, float v) {
  p[i] = sy_float_to_half(v);
}

struct Online {  // running softmax state of one query over the positions seen so far
  float m = -INFINITY, l = 0.0f, acc[kPerLane];
  template <class KV>
  __device__ void add(float s, const KV* v, int lane, int d) {
    const float m_new = fmaxf(m, s);
    const float corr = expf(m - m_new), e = expf(s - m_new);
    l = l * corr + e;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int dd = lane + i * SY_WARP;
      acc[i] = acc[i] * corr + (dd < d ? e * kv_get(v, dd) : 0.0f);
    }
    m = m_new;
  }
};

template <class KV>
__global__ void kv_store_kernel(const float* k, const float* v, KV* k_cache, KV* v_cache,
                                const int32_t* slots, int64_t kw, int64_t vw) {
  const int64_t t = blockIdx.x;
  const int64_t s = slots[t];
  for (int64_t i = threadIdx.x; i < kw; i += blockDim.x) kv_put(k_cache, s * kw + i, k[t * kw + i]);
  for (int64_t i = threadIdx.x; i < vw; i += blockDim.x) kv_put(v_cache, s * vw + i, v[t * vw + i]);
}

// grid (n_head, n_decode_tokens); kDecodeWarps warps split the positions, then combine.
template <class KV>
__global__ void attention_decode_kernel(const float* q, const KV* kc, const KV* vc, float* out,
                                        const int32_t* tokens, const int32_t* tok_seq,
                                        const int32_t* pos, Paging pg, int n_head, int group, int d,
                                        float scale, int window, const float* sinks,
                                        float softcap) {
  __shared__ float w_m[kDecodeWarps], w_l[kDecodeWarps];
  __shared__ float w_acc[kDecodeWarps][kMaxHeadDim];
  const int h = blockIdx.x, t = tokens[blockIdx.y], seq = tok_seq[t];
  const int lane = threadIdx.x % SY_WARP, warp = threadIdx.x / SY_WARP;
  const int64_t kv_width = (int64_t)d * (n_head / group), kv_off = (int64_t)(h / group) * d;
  const float* qv = q + ((int64_t)t * n_head + h) * d;
  float qr[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) qr[i] = lane + i * SY_WARP < d ? qv[lane + i * SY_WARP] : 0.0f;
  Online o;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) o.acc[i] = 0.0f;
  const int len = pos[t] + 1;
  for (int p = window_start(len, window) + warp; p < len; p += kDecodeWarps) {
    const int64_t slot = pg.slot(seq, p);
    const KV* kr = kc + slot * kv_width + kv_off;
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      if (lane + i * SY_WARP < d) dot += qr[i] * kv_get(kr, lane + i * SY_WARP);
    o.add(capped(warp_sum(dot) * scale, softcap), vc + slot * kv_width + kv_off, lane, d);
  }
  if (lane == 0) w_m[warp] = o.m, w_l[warp] = o.l;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i)
    if (lane + i * SY_WARP < d) w_acc[warp][lane + i * SY_WARP] = o.acc[i];
  __syncthreads();
  // A sink is one more key, of logit sinks[h] and no value.
  float mx = sinks ? sinks[h] : -INFINITY;
  // Finite: warp 0 saw the first position. A warp that saw none adds exp(-inf) = 0.
  for (int w = 0; w < kDecodeWarps; ++w) mx = fmaxf(mx, w_m[w]);
  float l = sinks ? expf(sinks[h] - mx) : 0.0f;
  for (int w = 0; w < kDecodeWarps; ++w) l += w_l[w] * expf(w_m[w] - mx);
  float* ov = out + ((int64_t)t * n_head + h) * d;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float acc = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w) acc += w_acc[w][i] * expf(w_m[w] - mx);
    ov[i] = acc / l;
  }
}

// grid (n_head, n_tiles); tile = {first token, tokens (<= kTileQ), sequence, and the positions
// [lo, hi) any of its tokens sees}.
template <class KV>
__global__ void attention_prefill_kernel(const float* q, const KV* kc, const KV* vc, float* out,
                                         const int32_t* tiles, const int32_t* pos, Paging pg,
                                         int n_head, int group, int d, float scale, int window,
                                         const float* sinks, float softcap) {
  __shared__ float ks[kChunk][kMaxHeadDim];
  __shared__ float vs[kChunk][kMaxHeadDim];
  const int h = blockIdx.x;
  const int32_t* tile = tiles + kTileInts * blockIdx.y;
  const int first = tile[0], count = tile[1], seq = tile[2], lo = tile[3], hi = tile[4];
  const int lane = threadIdx.x % SY_WARP, warp = threadIdx.x / SY_WARP;
  const bool active = warp < count;
  const int t = first + (active ? warp : 0);
  const int len = active ? pos[t] + 1 : 0, from = window_start(len, window);
  const int64_t kv_width = (int64_t)d * (n_head / group), kv_off = (int64_t)(h / group) * d;
  float qr[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i)
    qr[i] = lane + i * SY_WARP < d ? q[((int64_t)t * n_head + h) * d + lane + i * SY_WARP] : 0.0f;
  Online o;
  if (sinks) o.m = sinks[h], o.l = 1.0f;  // the sink: a first key of no value
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) o.acc[i] = 0.0f;
  for (int c0 = lo; c0 < hi; c0 += kChunk) {
    const int n = imin(kChunk, hi - c0);
    for (int e = threadIdx.x; e < n * d; e += blockDim.x) {
      const int p = e / d, i = e % d;
      const int64_t slot = pg.slot(seq, c0 + p);
      ks[p][i] = kv_get(kc, slot * kv_width + kv_off + i);
      vs[p][i] = kv_get(vc, slot * kv_width + kv_off + i);
    }
    __syncthreads();
    // This token's positions in the chunk: causal, and inside its window.
    const int stop = imin(n, len - c0);
    for (int p = from > c0 ? from - c0 : 0; p < stop; ++p) {
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i)
        if (lane + i * SY_WARP < d) dot += qr[i] * ks[p][lane + i * SY_WARP];
      o.add(capped(warp_sum(dot) * scale, softcap), vs[p], lane, d);
    }
    __syncthreads();
  }
  if (!active) return;
  float* ov = out + ((int64_t)t * n_head + h) * d;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i)
    if (lane + i * SY_WARP < d) ov[lane + i * SY_WARP] = o.acc[i] / o.l;
}

// The decode and prefill launches over a cache of element type KV.
template <class KV>
void launch_attention(const KV* kc, const KV* vc, const plugin::AttentionOp& op, size_t n_decode,
                      char* dev, size_t dec_at, size_t seq_at, size_t pos_at, size_t tile_at,
                      size_t n_tiles, Paging pg, int group, cudaStream_t stream) {
  auto at = [dev](size_t off) { return reinterpret_cast<const int32_t*>(dev + off); };
  const int64_t d = op.q.ne[0], n_head = op.q.ne[1];
  for (size_t t0 = 0; t0 < n_decode; t0 += 65535) {
    const dim3 grid((unsigned)n_head, (unsigned)std::min<size_t>(65535, n_decode - t0));
    SY_LAUNCH(attention_decode_kernel<KV>, grid, kDecodeWarps * SY_WARP, stream, op.q.f32(), kc, vc,
              op.out.f32(), at(dec_at) + t0, at(seq_at), at(pos_at), pg, (int)n_head, group, (int)d,
              op.scale, (int)op.window, op.sinks, op.softcap);
  }
  for (size_t i0 = 0; i0 < n_tiles; i0 += 65535) {
    const dim3 grid((unsigned)n_head, (unsigned)std::min<size_t>(65535, n_tiles - i0));
    SY_LAUNCH(attention_prefill_kernel<KV>, grid, kTileQ * SY_WARP, stream, op.q.f32(), kc, vc,
              op.out.f32(), at(tile_at) + kTileInts * i0, at(pos_at), pg, (int)n_head, group,
              (int)d, op.scale, (int)op.window, op.sinks, op.softcap);
  }
}

}  // namespace

void GpuBackend::kv_store(const KvStoreOp& op) {
  const int64_t n_tokens = op.k.ne[1];
  if (n_tokens == 0) return;
  begin_op({op.k.data, op.v.data, op.k_cache.data, op.v_cache.data});
  meta_begin();
  const size_t slots_at = meta_add(op.slots, n_tokens * sizeof(int32_t));
  const int32_t* d_slots = reinterpret_cast<const int32_t*>(meta_upload() + slots_at);
  const bool f16 = op.k_cache.dtype == SY_DTYPE_F16;
  uint16_t* k16 = static_cast<uint16_t*>(op.k_cache.data);
  uint16_t* v16 = static_cast<uint16_t*>(op.v_cache.data);
  for (int64_t t0 = 0; t0 < n_tokens; t0 += 65535) {
    const unsigned blocks = (unsigned)std::min<int64_t>(65535, n_tokens - t0);
    const float* k = op.k.f32() + t0 * op.k.ne[0];
    const float* v = op.v.f32() + t0 * op.v.ne[0];
    if (f16)
      SY_LAUNCH(kv_store_kernel<uint16_t>, blocks, kThreads, compute_, k, v, k16, v16, d_slots + t0,
                op.k.ne[0], op.v.ne[0]);
    else
      SY_LAUNCH(kv_store_kernel<float>, blocks, kThreads, compute_, k, v, op.k_cache.f32(),
                op.v_cache.f32(), d_slots + t0, op.k.ne[0], op.v.ne[0]);
  }
  launched("kv_store");
}

void GpuBackend::attention(const AttentionOp& op) {
  const int64_t d = op.q.ne[0], n_head = op.q.ne[1], n_tokens = op.q.ne[2];
  if (n_tokens == 0 || n_head == 0) return;
  if (d > kMaxHeadDim)
    throw plugin::Error(SY_ERR_UNSUPPORTED, "attention: head_dim " + std::to_string(d) + " above " +
                                                std::to_string(kMaxHeadDim) + " not supported");
  if (op.n_seqs > 65535 || n_head > 65535)
    throw plugin::Error(SY_ERR_UNSUPPORTED, "attention: more than 65535 heads or sequences");
  begin_op({op.q.data, op.k_cache.data, op.v_cache.data, op.out.data});
  // Per token its sequence; single-token sequences decode, the others are cut into tiles.
  std::vector<int32_t> tok_seq(n_tokens), decode, tiles;
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    const uint32_t b = op.seq_token_start[s], e = op.seq_token_start[s + 1];
    for (uint32_t t = b; t < e; ++t) tok_seq[t] = (int32_t)s;
    if (e - b == 1) {
      decode.push_back((int32_t)b);
      continue;
    }
    for (uint32_t t0 = b; t0 < e; t0 += kTileQ) {
      const uint32_t count = std::min<uint32_t>(kTileQ, e - t0);
      int32_t lo = INT32_MAX, hi = 0;
      for (uint32_t t = t0; t < t0 + count; ++t) {
        lo = std::min(lo, window_start(op.token_pos[t] + 1, (int)op.window));
        hi = std::max(hi, op.token_pos[t] + 1);
      }
      tiles.insert(tiles.end(), {(int32_t)t0, (int32_t)count, (int32_t)s, lo, hi});
    }
  }
  meta_begin();
  const size_t seq_at = meta_add(tok_seq.data(), tok_seq.size() * sizeof(int32_t));
  const size_t pos_at = meta_add(op.token_pos, n_tokens * sizeof(int32_t));
  const size_t tab_at =
      meta_add(op.block_tables, (size_t)op.n_seqs * op.max_blocks_per_seq * sizeof(int32_t));
  const size_t dec_at = meta_add(decode.data(), decode.size() * sizeof(int32_t));
  const size_t tile_at = meta_add(tiles.data(), tiles.size() * sizeof(int32_t));
  char* dev = meta_upload();
  auto at = [dev](size_t off) { return reinterpret_cast<const int32_t*>(dev + off); };
  const Paging pg{at(tab_at), (int)op.max_blocks_per_seq, (int)op.block_size};
  const int group = (int)(n_head / op.n_kv_head);
  if (op.k_cache.dtype == SY_DTYPE_F16)
    launch_attention(static_cast<const uint16_t*>(op.k_cache.data),
                     static_cast<const uint16_t*>(op.v_cache.data), op, decode.size(), dev, dec_at,
                     seq_at, pos_at, tile_at, tiles.size() / kTileInts, pg, group, compute_);
  else
    launch_attention(op.k_cache.f32(), op.v_cache.f32(), op, decode.size(), dev, dec_at, seq_at,
                     pos_at, tile_at, tiles.size() / kTileInts, pg, group, compute_);
  launched("attention");
}

}  // namespace sy::gpu
