// The dispatch point of the cpu_onednn kernels: one KernelTable per CPU path, chosen once at
// load (cpu_path.h). A weight dtype is one GemvEntry in the path's table: its row kernel and
// the activation format it reads, which the caller prepares once per matmul.
#pragma once

#include <cstdint>

#include "cpu_path.h"

namespace sy::cpu_onednn::kernels {

// Activations quantized for integer dot products: per row, blocks of kActBlock values, each an
// F32 scale d and kActBlock int16 quants q = round(x / d) with d = max|x| / 32767 (ggml's Q8_0
// idea with 16-bit quants: the error, at most d/2 per value, stays inside the model tests'
// tolerances, which 8-bit quants exceed; the kernels use int16 dot products, vpdpwssd).
constexpr int kActBlock = 32;

enum class ActFormat {
  f32,  // the F32 rows as given
  q16,  // QuantRows below
};

struct GemvArgs {
  const float* x;    // m rows of k F32 values
  const int16_t* q;  // ActFormat::q16: m rows of k quants
  const float* d;    // ActFormat::q16: m rows of k / kActBlock scales
  int64_t m, k;
  const uint8_t* w;  // n rows of row_bytes (the weight dtype's encoding of k values)
  int64_t row_bytes;
  float* y;  // y[r * ldy + j] = dot(x row r, weight row j)
  int64_t ldy;
};

// Output rows [j0, j1) for every activation row.
using GemvFn = void (*)(const GemvArgs& a, int64_t j0, int64_t j1);

struct GemvEntry {
  uint32_t dtype;  // sy_dtype
  ActFormat act;
  GemvFn fn;
};

// One step of flash attention: a tile of query rows (tokens x heads of one KV head) against a
// tile of keys, with the online softmax state of every row. Head dims are padded to dp (a
// multiple of the path's vector width) with zeros in q, kt and v.
struct AttnTileArgs {
  int64_t rows, dp;
  const float* q;          // rows x dp, already multiplied by the softmax scale
  const int32_t* n_valid;  // per row: it sees keys [0, n_valid) of this tile (causal mask)
  const float* kt;         // dp x attn_keys: K transposed; columns >= n_keys are zero
  const float* v;          // attn_keys x dp; rows >= n_keys are zero
  int64_t n_keys;
  float* s;     // scratch: rows x attn_keys
  float* corr;  // scratch: rows
  float* m;     // per row: running max (start at -inf)
  float* l;     // per row: running sum of exp (start at 0)
  float* o;     // rows x dp: running output (start at 0); divide by l at the end
};

// Attention of one decoding token's query heads that share a KV head (rows = the group) over
// keys [0, n_keys), read straight from the paged cache (no tile gather: the rows are too few to
// pay for one). Two passes over the keys: scores (kept in scratch), then the weighted values.
struct AttnDecodeArgs {
  int64_t rows, d;
  const float* q;       // rows x d, already multiplied by the softmax scale
  const void* k_cache;  // F32 or F16 rows of `width` values, slot s at row s
  const void* v_cache;
  bool f16;               // the caches' dtype
  int64_t width, kv_off;  // cache row width; this KV head's first column
  const int32_t* table;   // the sequence's block table
  int64_t block_size, n_keys;
  float* s;    // scratch: rows x n_keys
  float* out;  // rows x d
};

struct KernelTable {
  CpuPath path;
  // Quantizes m rows of k values (k % kActBlock == 0) into q (m * k) and d (m * k / kActBlock).
  void (*quantize_q16)(const float* x, int64_t m, int64_t k, int16_t* q, float* d);
  const GemvEntry* gemv;  // n_gemv entries
  int n_gemv;
  // n F32 values as F16 (round to nearest even) and back.
  void (*f32_to_f16)(const float* src, uint16_t* dst, int64_t n);
  void (*f16_to_f32)(const uint16_t* src, float* dst, int64_t n);
  int vec_floats;  // the path's vector width: head dims are padded to a multiple of it
  int attn_keys;   // keys per attention tile
  void (*attn_tile)(const AttnTileArgs& a);
  void (*attn_decode)(const AttnDecodeArgs& a);

  // The entry for a weight dtype, or nullptr (the caller then dequantises for the GEMM).
  const GemvEntry* find_gemv(uint32_t dtype) const;
};

// The table of each path; call only those cpu_supports() allows.
const KernelTable& table_scalar();
const KernelTable& table_avx2();
const KernelTable& table_avx512();
const KernelTable& table_avx512_vnni();
const KernelTable& table_avx_vnni();
const KernelTable& table_for(CpuPath p);

}  // namespace sy::cpu_onednn::kernels
