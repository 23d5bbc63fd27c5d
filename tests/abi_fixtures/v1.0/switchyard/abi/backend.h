/* Switchyard backend interface: what a hardware backend plugin implements.
 *
 * Thread contract: calls on one sy_backend_t are serialised by the host (never concurrent);
 * different sy_backend_t handles may be used from different threads at once.
 * Ownership: buffers are created and freed through this table only; tensor descriptors and
 * argument structs are borrowed for the duration of the call; host arrays named in argument
 * structs (ids, positions, block tables, slots) are borrowed for the call too.
 * Layout: tensors are contiguous, ggml order (ne[0] varies fastest). A weight matrix that maps
 * K inputs to N outputs has ne = {K, N}, stored as N rows of K values.
 * An op a backend does not implement is NULL; the host refuses to load a model that needs it and
 * names the op. */
#ifndef SWITCHYARD_ABI_BACKEND_H
#define SWITCHYARD_ABI_BACKEND_H

#include "switchyard/abi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_backend_s* sy_backend_t;
typedef struct sy_buffer_s* sy_buffer_t;

typedef enum sy_device_kind {
  SY_DEVICE_CPU = 0,
  SY_DEVICE_GPU = 1,
  SY_DEVICE_KIND_FORCE_32BIT = 0x7fffffff
} sy_device_kind;

typedef struct sy_device_info {
  uint32_t struct_size;
  uint32_t kind;      /* sy_device_kind */
  uint32_t available; /* 0: the plugin loaded but found no usable device ("no device") */
  uint32_t reserved0;
  char name[64];
  char vendor[32];
  uint64_t memory_total; /* bytes; 0 when unknown */
  uint64_t memory_free;
  uint64_t weight_dtypes; /* bit (1 << sy_dtype) set for every weight dtype matmul accepts */
} sy_device_info;

typedef struct sy_tensor {
  uint32_t struct_size;
  uint32_t dtype; /* sy_dtype */
  sy_buffer_t buffer;
  uint64_t offset; /* bytes from the start of buffer */
  int64_t ne[4];   /* unused trailing dims are 1 */
} sy_tensor;

/* Writes new keys and values into a paged cache. Cache layout per layer:
 * F32 {head_dim * n_kv_head, block_size * n_blocks}: slot s is row s. */
typedef struct sy_kv_store_args {
  uint32_t struct_size;
  const sy_tensor* k;       /* F32 {head_dim * n_kv_head, n_tokens} */
  const sy_tensor* v;       /* F32 {head_dim * n_kv_head, n_tokens} */
  const sy_tensor* k_cache; /* F32 {head_dim * n_kv_head, n_slots} */
  const sy_tensor* v_cache;
  const int32_t* slots; /* n_tokens entries: block_id * block_size + offset in block */
} sy_kv_store_args;

/* Causal attention of a batch of tokens from several sequences over a paged KV cache.
 * Token t of sequence s attends to positions [0, token_pos[t]] of s, read through s's block
 * table; the keys of the batch's own tokens must already be stored (kv_store). Query head h
 * uses KV head h / (n_head / n_kv_head) (grouped-query attention). */
typedef struct sy_attention_args {
  uint32_t struct_size;
  const sy_tensor* q;       /* F32 {head_dim, n_head, n_tokens} */
  const sy_tensor* k_cache; /* F32 {head_dim * n_kv_head, n_slots} */
  const sy_tensor* v_cache;
  const sy_tensor* out; /* F32 {head_dim, n_head, n_tokens} */
  uint32_t n_kv_head;
  uint32_t n_seqs;
  const uint32_t* seq_token_start; /* n_seqs + 1 offsets into the batch's tokens */
  const int32_t* token_pos;        /* n_tokens absolute positions */
  const int32_t* block_tables;     /* n_seqs rows of max_blocks_per_seq block ids */
  uint32_t max_blocks_per_seq;
  uint32_t block_size;
  float scale; /* usually 1/sqrt(head_dim) */
} sy_attention_args;

typedef enum sy_rope_mode {
  SY_ROPE_NORM = 0, /* adjacent pairs (x[2i], x[2i+1]): llama.cpp LLAMA_ROPE_TYPE_NORM */
  SY_ROPE_NEOX = 2, /* halves (x[i], x[i + n_rot/2]) */
  SY_ROPE_MODE_FORCE_32BIT = 0x7fffffff
} sy_rope_mode;

typedef struct sy_backend_iface {
  uint32_t struct_size;
  uint32_t reserved0;

  /* ---- since 1.0: lifecycle ---- */
  /* Creates a backend on a device. On failure *out is untouched and last_error(NULL) says why. */
  sy_status (*create)(const sy_param* params, size_t n_params, sy_backend_t* out);
  void (*destroy)(sy_backend_t backend);
  /* Message of the last failed call on `backend` (or of the last failed create when NULL).
   * Valid until the next call on the same handle from the same thread. */
  const char* (*last_error)(sy_backend_t backend);
  sy_status (*device_info)(sy_backend_t backend, sy_device_info* out);

  /* ---- since 1.0: memory ---- */
  sy_status (*buffer_alloc)(sy_backend_t backend, uint64_t size, sy_buffer_t* out);
  /* Optional: wraps host memory without copying (it must outlive the buffer). */
  sy_status (*buffer_from_host)(sy_backend_t backend, void* ptr, uint64_t size, sy_buffer_t* out);
  void (*buffer_free)(sy_backend_t backend, sy_buffer_t buffer);
  /* Host address of the buffer's first byte, or NULL when not host visible. */
  void* (*buffer_host_ptr)(sy_backend_t backend, sy_buffer_t buffer);
  sy_status (*buffer_write)(sy_backend_t backend, sy_buffer_t buffer, uint64_t offset,
                            const void* src, uint64_t size);
  sy_status (*buffer_read)(sy_backend_t backend, sy_buffer_t buffer, uint64_t offset, void* dst,
                           uint64_t size);
  /* Waits for all queued work; buffer_read results are valid after it. */
  sy_status (*synchronize)(sy_backend_t backend);

  /* ---- since 1.0: ops (dst may not alias inputs unless stated) ---- */
  /* dst{K, n} = rows ids[0..n) of table{K, V} converted to F32. */
  sy_status (*get_rows)(sy_backend_t backend, const sy_tensor* table, const int32_t* ids,
                        uint32_t n, const sy_tensor* dst);
  /* y{N, M} = W{K, N} applied to each of the M rows of x{K, M}; x and y are F32, W any dtype the
   * device reports in weight_dtypes. */
  sy_status (*matmul)(sy_backend_t backend, const sy_tensor* x, const sy_tensor* w,
                      const sy_tensor* y);
  /* y = x / sqrt(mean(x^2) + eps) * w, per row of x{n, rows}; w is F32 {n}. y may alias x. */
  sy_status (*rms_norm)(sy_backend_t backend, const sy_tensor* x, const sy_tensor* w, float eps,
                        const sy_tensor* y);
  /* In place on x{head_dim, n_head, n_tokens}: rotates the first n_rot dims of every head by
   * theta = pos[t] * freq_scale * freq_base^(-2i/n_rot). */
  sy_status (*rope)(sy_backend_t backend, const sy_tensor* x, const int32_t* pos, uint32_t n_rot,
                    float freq_base, float freq_scale, uint32_t mode);
  /* y = a + b, same shapes, F32. y may alias a or b. */
  sy_status (*add)(sy_backend_t backend, const sy_tensor* a, const sy_tensor* b,
                   const sy_tensor* y);
  /* y = silu(gate) * up, F32. y may alias gate or up. */
  sy_status (*swiglu)(sy_backend_t backend, const sy_tensor* gate, const sy_tensor* up,
                      const sy_tensor* y);
  /* Row-wise softmax of x{n, rows} into y (may alias). */
  sy_status (*softmax)(sy_backend_t backend, const sy_tensor* x, const sy_tensor* y);
  sy_status (*kv_store)(sy_backend_t backend, const sy_kv_store_args* args);
  sy_status (*attention)(sy_backend_t backend, const sy_attention_args* args);
} sy_backend_iface;

#ifdef __cplusplus
}
#endif
#endif
