// The dispatch point of the cpu_onednn kernels: one KernelTable per CPU path, chosen once at
// load (cpu_path.h). A weight dtype is one GemvEntry in the path's table: its row kernel and
// the activation format it reads, which the caller prepares once per matmul.
#pragma once

#include <cstdint>

#include "cpu_path.h"

namespace sy::cpu_onednn::kernels {

// Activations quantized for integer dot products, once per matmul.
//
// q16: per row, blocks of kActBlock values (the last one shorter when k is not a multiple; k is
// a multiple of kActChunk), each an F32 scale d = max|x| / 32767 and int16 quants
// q = round(x / d); the kernels use int16 dot products (vpdpwssd). Nearly exact (each value off
// by at most d / 2), but the widened codes and the 2-byte quants make decode compute-bound.
//
// q8_32 / q8_256: ggml's Q8_0 / Q8_K activations, as llama.cpp's CPU backend computes them:
// int8 quants q = round(x * 127 / max|x|) and an F32 scale d = max|x| / 127 per block of 32
// (the 32-value weight blocks: each weight block meets one activation block, so a block's
// int32 dot product takes one F32 multiply-add by d_w * d_x) or of 256 values (the super-block
// types: the group scales multiply int16 pair sums, the whole super-block stays in int32, then
// one multiply-add by d_w * d_x). The codes stay 8-bit: one vpdpbusd (AVX2: vpmaddubsw) per 32
// values, signed codes through the sign trick (|w| times x with w's sign), the offset types'
// unsigned codes as they are. Both keep the per-16 sums below for the offsets. The error is
// llama.cpp's own: the same blocks, the same 127 levels.
constexpr int kActBlock = 256;
constexpr int kActChunk = 32;
// Quantised weights with offsets (Q4_1, Q5_1, the K-quants' mins) also read, per 16 values, the
// sum of the quantized activations times their scale (ggml's Q8_K block sums).
constexpr int kActGroup = 16;
// Scales per row of k values.
constexpr int64_t act_blocks(int64_t k) {
  return (k + kActBlock - 1) / kActBlock;
}

enum class ActFormat {
  f32,     // the F32 rows as given
  q16,     // int16 quants, one scale per kActBlock values
  q8_32,   // int8 quants, one scale per 32 values
  q8_256,  // int8 quants, one scale per 256 values
};
// Values per scale of an 8-bit format.
constexpr int q8_block(ActFormat f) {
  return f == ActFormat::q8_256 ? 256 : 32;
}

struct GemvArgs {
  const float* x;    // m rows of k F32 values
  const int16_t* q;  // ActFormat::q16: m rows of k quants
  const int8_t* q8;  // q8_32 / q8_256: m rows of k quants
  const float* d;    // m rows of scales: act_blocks(k) (q16) or k / q8_block (q8)
  const float* s;    // m rows of k / kActGroup sums
  int64_t m, k;
  const uint8_t* w;  // n rows of row_bytes (the weight dtype's encoding of k values)
  int64_t row_bytes;
  float* y;  // y[r * ldy + j] = dot(x row r, weight row j)
  int64_t ldy;
  // fn8 of an entry with bias8: m rows of k / 4 starts of its dot products' lanes (bias_starts)
  const int32_t* bias8;
  // fn8_packed: rows [0, packed_rows) are packed groups (packed_layouts.h), the rest plain
  int64_t packed_rows;
  // fn8_packed of an entry with packed_bias: m rows of k / 32 starts of its blocks' dot
  // products (bias_starts with group 32)
  const int32_t* block_starts;
};

// Output rows [j0, j1) for every activation row.
using GemvFn = void (*)(const GemvArgs& a, int64_t j0, int64_t j1);

// One weight row of k values as F32, bit for bit what the dtype table's codec gives (the GEMM's
// dequantised panels and get_rows).
using DequantFn = void (*)(const uint8_t* row, float* dst, int64_t k);

struct GemvEntry {
  uint32_t dtype;  // sy_dtype
  ActFormat act;
  GemvFn fn;
  DequantFn dequant;
  // The 8-bit kernel of a block type (the backend's default; act_bits=16 keeps fn), or null.
  ActFormat act8;
  GemvFn fn8;
  // fn8 takes unsigned codes, the stored code plus bias8 (Q4_0: 8, Q5_0: 16), and starts each
  // dot product's lanes at GemvArgs::bias8: three vector operations a block fewer than the
  // sign trick (Q4_0, one thread: AVX2 1.08x, AVX-512 VNNI 1.02x). 0: no bias, no starts.
  int bias8;
  // fn8 on weights in the packed layout (packed_layouts.h), or null: this path does not pack the
  // dtype (the backend then leaves its weights plain).
  GemvFn fn8_packed = nullptr;
  // The 16 rows of a packed group as F32, row r at dst + r * ld, as dequant gives the plain
  // rows (the GEMM's panels).
  void (*dequant_packed)(const uint8_t* group, int64_t k, float* dst, int64_t ld) = nullptr;
  // fn8_packed's codes are unsigned, the value's code plus this (Q8_0: 128, Q4_0: 8): each
  // block's dot products start at GemvArgs::block_starts. 0: no starts.
  int packed_bias = 0;
};

// One step of flash attention: a tile of query rows (tokens x heads of one KV head) against a
// tile of keys, with the online softmax state of every row. Head dims are padded to dp (a
// multiple of the path's vector width) with zeros in q, kt and v.
struct AttnTileArgs {
  int64_t rows, dp;
  const float* q;          // rows x dp, already multiplied by the softmax scale
  const int32_t* n_valid;  // per row: it sees keys [0, n_valid) of this tile (causal mask)
  const int32_t* n_skip;   // per row: minus the first n_skip of those (a sliding window)
  const float* kt;         // dp x attn_keys: K transposed; columns >= n_keys are zero
  const float* v;          // attn_keys x dp; rows >= n_keys are zero
  int64_t n_keys;
  float* s;     // scratch: rows x attn_keys
  float* corr;  // scratch: rows
  float* m;     // per row: running max (start at -inf)
  float* l;     // per row: running sum of exp (start at 0)
  float* o;     // rows x dp: running output (start at 0); divide by l at the end
  float softcap;  // 0, or Gemma 2's cap: each score s becomes softcap * tanh(s / softcap)
};

// Attention of one decoding token over keys [k0, k1) of its sequence, for every query head,
// read straight from the paged cache (no tile gather: the rows are too few to pay for one), in
// two passes: scores (kept in scratch), then the weighted values. Head r reads KV head
// r / group, at columns (r / group) * d of the cache rows. A sequence's keys may be split into
// spans on several threads: each span's output is normalised by its own softmax sum, and m and
// l let the spans merge exactly (out = sum of l e^(m - max m) out / the sum of l e^(m - max m)).
struct AttnDecodeArgs {
  int64_t n_kv, group, d;
  const float* q;       // n_kv * group rows of d, already multiplied by the softmax scale
  const void* k_cache;  // F32 or F16 rows of `width` values, slot s at row s
  const void* v_cache;
  bool f16;  // the caches' dtype
  int64_t width;
  const int32_t* table;  // the sequence's block table
  int64_t block_size, k0, k1;
  float* s;    // scratch: rows x (k1 - k0)
  float* out;  // rows x d
  float* m;    // per row: the span's max score
  float* l;    // per row: the sum over the span of e^(score - m)
  float softcap;  // as AttnTileArgs::softcap
};

// Mamba-2's scan, one token of one head (backend.h, sy_ssm_scan2_args): for its rows p in
// [0, rows) (channels; state row p holds d_state values at state + p * d_state),
//   s = s * dA + B * (x[p] * delta);  y[p] = (dot(s, C) + dskip * x[p]) * silu(z[p])
// (the gate only when z is given). The head's state is read and written once.
struct Ssm2Args {
  int64_t rows, d_state;
  float* state;
  const float *x, *b, *c, *z;  // z: rows values, or null
  float delta, da, dskip;
  float* y;
};

// The gated delta rule, one token of one value head (backend.h, sy_gated_delta_net_args): on the
// S x S state (column c's S values contiguous, element (i, c) at c * S + i), with kn and qn
// already L2-normalised,
//   u[c] = beta * (v[c] - decay * dot(M[:, c], kn));  M[:, c] = decay * M[:, c] + kn * u[c]
//   y[c] = scale * dot(M[:, c], qn)
// one column at a time, so the state is read and written once (the column stays in L1 between
// its two passes).
struct GdnArgs {
  int64_t S;
  float* state;
  const float *qn, *kn, *v;
  float decay, beta, scale;
  float* y;
};

struct KernelTable {
  CpuPath path;
  // Quantizes m rows of k values (k % kActChunk == 0) into q (m * k), d (m * act_blocks(k))
  // and sums (m * k / kActGroup).
  void (*quantize_q16)(const float* x, int64_t m, int64_t k, int16_t* q, float* d, float* sums);
  // The same for q8_32 / q8_256 (k % block == 0): d gets m * k / block scales.
  void (*quantize_q8)(const float* x, int64_t m, int64_t k, int block, int8_t* q, float* d,
                      float* sums);
  // out[i] = -bias * (q[group i] + ... + q[group i + group - 1]) for i < n / group: the lane
  // starts of q8 quants, GemvArgs::bias8 (group 4) and block_starts (group 32).
  void (*bias_starts)(const int8_t* q, int64_t n, int group, int bias, int32_t* out);
  const GemvEntry* gemv;  // n_gemv entries
  int n_gemv;
  // n F32 values as F16 (round to nearest even) and back.
  void (*f32_to_f16)(const float* src, uint16_t* dst, int64_t n);
  void (*f16_to_f32)(const uint16_t* src, float* dst, int64_t n);
  int vec_floats;  // the path's vector width: head dims are padded to a multiple of it
  int attn_keys;   // keys per attention tile
  void (*attn_tile)(const AttnTileArgs& a);
  void (*attn_decode)(const AttnDecodeArgs& a);
  void (*ssm2_token)(const Ssm2Args& a);
  void (*gdn_token)(const GdnArgs& a);

  // The entry for a weight dtype, or nullptr (not a weight dtype).
  const GemvEntry* find_gemv(uint32_t dtype) const;
  // One row of k values of a weight dtype as F32: the entry's dequant (every weight dtype has one).
  void dequant_row(uint32_t dtype, const uint8_t* row, float* dst, int64_t k) const;
};

// The table of each path; call only those cpu_supports() allows.
const KernelTable& table_scalar();
const KernelTable& table_avx2();
const KernelTable& table_avx512();
const KernelTable& table_avx512_vnni();
const KernelTable& table_avx_vnni();
const KernelTable& table_for(CpuPath p);

}  // namespace sy::cpu_onednn::kernels
