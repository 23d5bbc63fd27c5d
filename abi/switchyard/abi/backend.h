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
  /* ---- since 1.3 ---- */
  /* Bit (1 << sy_dtype) for every KV cache dtype kv_store and attention accept: F32, and F16
   * for a backend that supports an F16 cache. 0 (a plugin older than 1.3) means F32 only. */
  uint64_t kv_dtypes;
} sy_device_info;

typedef struct sy_tensor {
  uint32_t struct_size;
  uint32_t dtype; /* sy_dtype */
  sy_buffer_t buffer;
  uint64_t offset; /* bytes from the start of buffer */
  int64_t ne[4];   /* unused trailing dims are 1 */
} sy_tensor;

/* Writes new keys and values into a paged cache. Cache layout per layer:
 * {head_dim * n_kv_head, block_size * n_blocks}: slot s is row s. The caches' dtype is their
 * sy_tensor's: F32, or (since 1.3) F16 when the device reports it in kv_dtypes; k_cache and
 * v_cache share one dtype. An F16 cache stores each value rounded to nearest even. */
typedef struct sy_kv_store_args {
  uint32_t struct_size;
  const sy_tensor* k;       /* F32 {head_dim * n_kv_head, n_tokens} */
  const sy_tensor* v;       /* F32 {head_dim * n_kv_head, n_tokens} */
  const sy_tensor* k_cache; /* F32 or F16 {head_dim * n_kv_head, n_slots} */
  const sy_tensor* v_cache;
  const int32_t* slots; /* n_tokens entries: block_id * block_size + offset in block */
} sy_kv_store_args;

/* Causal attention of a batch of tokens from several sequences over a paged KV cache.
 * Token t of sequence s attends to positions [0, token_pos[t]] of s, read through s's block
 * table; the keys of the batch's own tokens must already be stored (kv_store). Query head h
 * uses KV head h / (n_head / n_kv_head) (grouped-query attention).
 * Since 1.5, a nonzero `window` limits that to the last `window` positions:
 * [max(0, token_pos[t] - window + 1), token_pos[t]] (llama.cpp's sliding-window mask: key p0 is
 * hidden from query p1 when p1 - p0 >= window). */
typedef struct sy_attention_args {
  uint32_t struct_size;
  const sy_tensor* q;       /* F32 {head_dim, n_head, n_tokens} */
  const sy_tensor* k_cache; /* F32 or F16 {head_dim * n_kv_head, n_slots}, as for kv_store */
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
  /* ---- since 1.5 ---- */
  /* 0: every earlier position; else the sliding window's length. 64 bits wide so that it starts
   * past the 1.4 struct's tail padding, which a 1.4 host's struct_size covers. */
  uint64_t window;
  /* ---- since 1.6 ---- */
  /* F32 {n_head}, or NULL: a sink logit per query head (gpt-oss), a key with no value in every
   * softmax: out = sum_p e^(s_p - m) v_p / (sum_p e^(s_p - m) + e^(sinks[h] - m)), the sink not
   * multiplied by scale, m the largest of the scores and the sink. */
  const sy_tensor* sinks;
  /* 0, or the cap c of Gemma 2's logit soft-capping: each score s (after scale) becomes
   * c * tanh(s / c) before the softmax. */
  float softcap;
} sy_attention_args;

/* The shape of one engine step, for cost estimates (since 1.1). */
typedef struct sy_step_shape {
  uint32_t struct_size;
  uint32_t n_prefill_tokens; /* prompt tokens computed this step */
  uint32_t n_decode_seqs;    /* sequences decoding one token */
  uint32_t reserved0;
  uint64_t kv_ctx_tokens; /* cached tokens the step's attention reads, summed over sequences */
} sy_step_shape;

/* ---- Hybrid-model argument structs (since 1.1) ---- */

/* Causal depthwise conv1d over a batch of tokens from several sequences (Mamba's ssm_conv).
 * Prefill over a chunk and single-token decode are the same call. Sequence s owns batch tokens
 * [seq_token_start[s], seq_token_start[s+1]) (count may be 0) and state row state_slots[s].
 * Per sequence and channel c, with K = d_conv and S_c = the slot's K-1 previous inputs (oldest
 * first): win = [S_c[0..K-2], x[c, t0..]]; token j of the chunk outputs
 *   y[c, t0+j] = sum_{k=0}^{K-1} weight[k, c] * win[j + k]  (+ bias[c]),
 * then silu() when apply_silu != 0 (Mamba applies it: y = silu(conv(x) + b)).
 * Afterwards S_c = the last K-1 entries of win (state read and written in place).
 * A freshly admitted sequence's row must be zeroed by the host first (buffer_write).
 * state_slots of one call must be distinct. y may not alias x, weight or state. */
typedef struct sy_ssm_conv_args {
  uint32_t struct_size;
  uint32_t n_seqs;
  const sy_tensor* x;              /* F32 {channels, n_tokens} */
  const sy_tensor* weight;         /* F32 {d_conv, channels}: llama.cpp ssm_conv1d.weight */
  const sy_tensor* bias;           /* F32 {channels}, or NULL for none */
  const sy_tensor* state;          /* F32 {d_conv - 1, channels, n_slots}: in/out, slot-major */
  const sy_tensor* y;              /* F32 {channels, n_tokens} */
  const uint32_t* seq_token_start; /* n_seqs + 1 ascending offsets into the batch's tokens */
  const int32_t* state_slots;      /* n_seqs rows of state, each in [0, n_slots) */
  uint32_t apply_silu;             /* nonzero: y = silu(conv + bias) */
  uint32_t reserved0;
} sy_ssm_conv_args;

/* Mamba-1 selective scan (S6) over a batch of tokens from several sequences, token by token in
 * order within each sequence (same batching as sy_ssm_conv_args). Per sequence, channel i in
 * [0, d_inner), state n in [0, d_state), with h = the slot's state (read and written in place):
 *   delta = softplus(dt[i, t] + dt_bias[i])     softplus(v) = v > 20 ? v : log1p(exp(v))
 *   h[n, i] = exp(delta * A[n, i]) * h[n, i] + delta * B[n, t] * u[i, t]
 *   y[i, t] = sum_n h[n, i] * C[n, t] + D[i] * u[i, t]
 *   y[i, t] *= silu(z[i, t])                    (only when z is given)
 * (ggml_ssm_scan plus Mamba's D skip and z gate.) A is -exp(A_log), as llama.cpp's ssm_a.
 * A freshly admitted sequence's row must be zeroed by the host first (buffer_write).
 * state_slots of one call must be distinct. y may not alias any input or state. */
typedef struct sy_ssm_scan_args {
  uint32_t struct_size;
  uint32_t n_seqs;
  const sy_tensor* u;       /* F32 {d_inner, n_tokens}: the conv output (after silu) */
  const sy_tensor* dt;      /* F32 {d_inner, n_tokens}: ssm_dt . dt_r, before bias and softplus */
  const sy_tensor* dt_bias; /* F32 {d_inner}, or NULL for none */
  const sy_tensor* a;       /* F32 {d_state, d_inner}: llama.cpp ssm_a */
  const sy_tensor* b;       /* F32 {d_state, n_tokens} */
  const sy_tensor* c;       /* F32 {d_state, n_tokens} */
  const sy_tensor* d;       /* F32 {d_inner}, or NULL for no skip term */
  const sy_tensor* z;       /* F32 {d_inner, n_tokens}, or NULL for no gate */
  const sy_tensor* state;   /* F32 {d_state, d_inner, n_slots}: in/out, slot-major */
  const sy_tensor* y;       /* F32 {d_inner, n_tokens} */
  const uint32_t* seq_token_start; /* n_seqs + 1 ascending offsets into the batch's tokens */
  const int32_t* state_slots;      /* n_seqs rows of state, each in [0, n_slots) */
} sy_ssm_scan_args;

typedef enum sy_moe_gating {
  SY_MOE_GATING_SOFTMAX = 1, /* llama.cpp LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX */
  SY_MOE_GATING_SIGMOID = 2, /* since 1.5: LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID */
  SY_MOE_GATING_FORCE_32BIT = 0x7fffffff
} sy_moe_gating;

/* MoE router, per token t (llama.cpp build_moe_ffn):
 *   p = softmax(logits[:, t]) over all n_expert experts (SY_MOE_GATING_SOFTMAX), or
 *   p = sigmoid(logits[:, t]) = 1 / (1 + exp(-logits)) element-wise (SIGMOID, since 1.5)
 *   ids[:, t] = the k = ne0(ids) experts of highest p + selection_bias (since 1.5; 0 when NULL:
 *               the bias only chooses, it is not in the weights), in descending order of that
 *               sum; ties: lower id first
 *   w[j, t] = p[ids[j, t]]; if normalize: w /= max(sum_j w[j, t], 6.103515625e-5); w *= scale
 * ids and weights may not alias logits. */
typedef struct sy_moe_gate_args {
  uint32_t struct_size;
  uint32_t gating;          /* sy_moe_gating; an unknown value is SY_ERR_UNSUPPORTED */
  const sy_tensor* logits;  /* F32 {n_expert, n_tokens} */
  const sy_tensor* ids;     /* I32 {k, n_tokens}, 1 <= k <= n_expert */
  const sy_tensor* weights; /* F32 {k, n_tokens} */
  uint32_t normalize;       /* nonzero: renormalise the k weights to sum 1 (Mixtral) */
  float scale;              /* applied last; 1 for none */
  /* ---- since 1.5 ---- */
  const sy_tensor* selection_bias; /* F32 {n_expert} (llama.cpp exp_probs_b), or NULL */
} sy_moe_gate_args;

/* Grouped expert matmul (ggml_mul_mat_id): for token t and slot j in [0, k), e = ids[j, t],
 *   y[:, j, t] = W[:, :, e] applied to x[:, j', t],  j' = (ne1(x) == 1 ? 0 : j)
 * where W{K, N, n_expert} holds n_expert matrices of the sy matmul layout (expert e starts at
 * byte e * N * row_bytes(K), or since 1.5 at e * expert_stride when that is nonzero), in any
 * dtype the device reports in weight_dtypes. Since 1.5 the expert's epilogue follows, in F32 and
 * in this order (llama.cpp's ggml_add_id then ggml_mul):
 *   y[:, j, t] += bias[:, e]    (when bias is given)
 *   y[:, j, t] *= scale[e]      (when scale is given)
 * Every id must be in [0, n_expert) (CPU backends check and return SY_ERR_INVALID_ARG). y may
 * not alias x. */
typedef struct sy_moe_matmul_args {
  uint32_t struct_size;
  uint32_t reserved0;
  const sy_tensor* x;   /* F32 {K, 1 or k, n_tokens} */
  const sy_tensor* w;   /* {K, N, n_expert} */
  const sy_tensor* ids; /* I32 {k, n_tokens} (the moe_gate output) */
  const sy_tensor* y;   /* F32 {N, k, n_tokens} */
  /* ---- since 1.5 ---- */
  /* Bytes from one expert's matrix to the next; 0 means N * row_bytes(K). Larger strides let
   * W be the rows of a fused tensor: llama.cpp's ffn_gate_up_exps {K, 2N, n_expert} is a gate
   * W {K, N, n_expert} at its offset and an up W at offset + N * row_bytes(K), both with stride
   * 2N * row_bytes(K). A multiple of the dtype's row alignment (2 bytes). */
  uint64_t expert_stride;
  const sy_tensor* bias;  /* F32 {N, n_expert}, or NULL */
  const sy_tensor* scale; /* F32 {n_expert}, or NULL */
} sy_moe_matmul_args;

typedef enum sy_rope_mode {
  SY_ROPE_NORM = 0, /* adjacent pairs (x[2i], x[2i+1]): llama.cpp LLAMA_ROPE_TYPE_NORM */
  SY_ROPE_NEOX = 2, /* halves (x[i], x[i + n_rot/2]) */
  SY_ROPE_MODE_FORCE_32BIT = 0x7fffffff
} sy_rope_mode;

/* ---- Argument structs since 1.3 ---- */

/* RoPE with per-pair frequency factors and YaRN, as ggml_rope_ext computes it, in F32 and in
 * this order (so backends agree with llama.cpp bit for bit in theta). In place on
 * x{head_dim, n_head, n_tokens}; for token t, pair i in [0, n_rot/2):
 *   theta_scale = powf(freq_base, -2.0f / n_rot)
 *   th_i = pos[t] * theta_scale^i        (a running F32 product: th_0 = pos, th_{i+1} = th_i *
 * theta_scale) e = th_i / freq_factors[i]           (factor 1 when freq_factors is NULL) theta =
 * freq_scale * e, mscale = attn_factor if ext_factor != 0:                  (YaRN; ramp over i
 * between the correction dims) corr(b) = n_rot * logf(n_ctx_orig / (b * 2 * pi)) / (2 *
 * logf(freq_base)) lo = max(0, floorf(corr(beta_fast))), hi = min(n_rot - 1,
 * ceilf(corr(beta_slow))) mix = (1 - min(1, max(0, (i - lo) / max(0.001f, hi - lo)))) * ext_factor
 *     theta = theta * (1 - mix) + e * mix, mscale *= 1 + 0.1f * logf(1 / freq_scale)
 *   c = cosf(theta) * mscale, s = sinf(theta) * mscale
 *   (a, b) = (a * c - b * s, a * s + b * c) for the pair (x[2i], x[2i+1]) (SY_ROPE_NORM) or
 *   (x[i], x[i + n_rot/2]) (SY_ROPE_NEOX); values from n_rot on are left as they are. */
typedef struct sy_rope_ext_args {
  uint32_t struct_size;
  uint32_t mode;                 /* sy_rope_mode */
  const sy_tensor* x;            /* F32 {head_dim, n_head, n_tokens}, rotated in place */
  const int32_t* pos;            /* n_tokens positions */
  const sy_tensor* freq_factors; /* F32 {n_rot / 2} (llama.cpp rope_freqs.weight), or NULL */
  uint32_t n_rot;                /* even, in [2, head_dim] */
  uint32_t n_ctx_orig;           /* YaRN: the context the model was trained with */
  float freq_base;
  float freq_scale; /* 1 / rope.scaling.factor */
  float ext_factor; /* 0: no YaRN ramp */
  float attn_factor;
  float beta_fast;
  float beta_slow;
} sy_rope_ext_args;

typedef enum sy_bias_scale_order {
  SY_SCALE_THEN_BIAS = 0, /* y = x * scale + bias   (llama.cpp: q/k/v and attention output) */
  SY_BIAS_THEN_SCALE = 1, /* y = (x + bias) * scale (llama.cpp: the FFN projections) */
  SY_BIAS_SCALE_ORDER_FORCE_32BIT = 0x7fffffff
} sy_bias_scale_order;

/* The epilogue of a projection with an optional bias and a per-tensor output multiplier
 * (llama.cpp's `.bias` and `.scale` tensors): per row r of x{n, rows}, in F32, each step rounded
 * to F32 as ggml's separate add and mul are:
 *   SY_SCALE_THEN_BIAS: y[i, r] = x[i, r] * scale + bias[i]
 *   SY_BIAS_THEN_SCALE: y[i, r] = (x[i, r] + bias[i]) * scale
 * bias may be NULL (none); scale 1 is no scaling. y may alias x. */
typedef struct sy_bias_scale_args {
  uint32_t struct_size;
  uint32_t order;        /* sy_bias_scale_order; an unknown value is SY_ERR_INVALID_ARG */
  const sy_tensor* x;    /* F32 {n, rows...} */
  const sy_tensor* bias; /* F32 {n}, or NULL */
  const sy_tensor* y;    /* F32, the shape of x */
  float scale;
  uint32_t reserved0;
} sy_bias_scale_args;

/* ---- Argument structs since 1.5 ---- */

/* Mamba-2's selective scan (the recurrent form of SSD, ggml_ssm_scan with a scalar A per head)
 * over a batch of tokens from several sequences, batched as sy_ssm_scan_args. Sizes: d_inner
 * = ne0(y), n_head = ne0(a) (d_inner a multiple of it: head_dim = d_inner / n_head), d_state =
 * ne0(state), n_group = (ne0(xbc) - d_inner) / (2 * d_state) (n_head a multiple of it).
 * Per sequence, token t, head h (group g = h / (n_head / n_group)), with s = the slot's state:
 *   delta = softplus(dt[h, t] + dt_bias[h])      softplus(v) = v > 20 ? v : log1p(exp(v))
 *   dA = exp(delta * a[h])
 *   for each of the head's channels i in [h * head_dim, (h + 1) * head_dim):
 *     xdt = x[i, t] * delta
 *     s[n, i] = s[n, i] * dA + B[n, g, t] * xdt            for n in [0, d_state)
 *     y[i, t] = sum_n s[n, i] * C[n, g, t]
 *     y[i, t] = y[i, t] + d[h] * x[i, t]                    (when d is given)
 *     y[i, t] = y[i, t] * silu(z[i, t])                     (when z is given)
 * where column t of xbc holds x (d_inner values), then B {d_state, n_group}, then C (likewise):
 * Mamba-2's conv output, which llama.cpp views in place. Fresh slots are zeroed by the host;
 * state_slots of one call are distinct; y aliases no input or state. */
typedef struct sy_ssm_scan2_args {
  uint32_t struct_size;
  uint32_t n_seqs;
  const sy_tensor* xbc;            /* F32 {d_inner + 2 * n_group * d_state, n_tokens} */
  const sy_tensor* dt;             /* F32 {n_head, n_tokens}: before the bias and softplus */
  const sy_tensor* dt_bias;        /* F32 {n_head}, or NULL */
  const sy_tensor* a;              /* F32 {n_head}: llama.cpp ssm_a ({1, n_head} in files) */
  const sy_tensor* d;              /* F32 {n_head}, or NULL for no skip term */
  const sy_tensor* z;              /* F32 {d_inner, n_tokens}, or NULL for no gate */
  const sy_tensor* state;          /* F32 {d_state, d_inner, n_slots}: in/out, slot-major */
  const sy_tensor* y;              /* F32 {d_inner, n_tokens} */
  const uint32_t* seq_token_start; /* n_seqs + 1 ascending offsets into the batch's tokens */
  const int32_t* state_slots;      /* n_seqs rows of state, each in [0, n_slots) */
} sy_ssm_scan2_args;

typedef enum sy_gdn_head_map {
  SY_GDN_HEADS_MODULO = 0,  /* value head j reads key head j mod n_k_head (qwen35, qwen35moe) */
  SY_GDN_HEADS_BLOCKED = 1, /* value head j reads key head j / (n_v_head / n_k_head) (qwen3next) */
  SY_GDN_HEADS_FORCE_32BIT = 0x7fffffff
} sy_gdn_head_map;

/* The gated delta rule (Qwen3-Next / Qwen3.5 linear attention, llama.cpp's fused
 * ggml_gated_delta_net with the gate, beta and L2 norms folded in) over a batch of tokens from
 * several sequences, batched as sy_ssm_scan_args, token by token in order. Sizes: S = ne0(state)
 * (the key and value head size), n_v_head = ne0(alpha), n_k_head = (ne0(qkv) - n_v_head * S) /
 * (2 * S) (n_v_head a multiple of it). Column t of qkv holds q (n_k_head heads of S values), then
 * k (likewise), then v (n_v_head heads). Per sequence, token t, value head j reading key head m
 * (head_map), with M = head j's S x S state in the slot (element (i, c) at c * S + i):
 *   g = softplus(alpha[j, t] + dt_bias[j]) * a[j];  b = 1 / (1 + exp(-beta[j, t]))
 *   qn = q_m / max(|q_m|_2, eps);  kn = k_m / max(|k_m|_2, eps)      (ggml_l2_norm)
 *   M = exp(g) * M
 *   u[c] = b * (v_j[c] - sum_i M[i, c] * kn[i])        for c in [0, S)
 *   M[i, c] = M[i, c] + kn[i] * u[c]
 *   y[c, j, t] = (sum_i M[i, c] * qn[i]) / sqrt(S)
 * Fresh slots are zeroed by the host; state_slots of one call are distinct; y aliases no input
 * or state. */
typedef struct sy_gated_delta_net_args {
  uint32_t struct_size;
  uint32_t n_seqs;
  const sy_tensor* qkv;     /* F32 {(2 * n_k_head + n_v_head) * S, n_tokens}: the conv output */
  const sy_tensor* alpha;   /* F32 {n_v_head, n_tokens}: before the bias and softplus */
  const sy_tensor* beta;    /* F32 {n_v_head, n_tokens}: before the sigmoid */
  const sy_tensor* dt_bias; /* F32 {n_v_head} (llama.cpp ssm_dt.bias) */
  const sy_tensor* a;       /* F32 {n_v_head} (llama.cpp ssm_a: -exp(A_log)) */
  const sy_tensor* state;   /* F32 {S, S, n_v_head, n_slots}: in/out, slot-major */
  const sy_tensor* y;       /* F32 {S, n_v_head, n_tokens} */
  const uint32_t* seq_token_start; /* n_seqs + 1 ascending offsets into the batch's tokens */
  const int32_t* state_slots;      /* n_seqs rows of state, each in [0, n_slots) */
  uint32_t head_map;               /* sy_gdn_head_map; an unknown value is SY_ERR_INVALID_ARG */
  float eps;                       /* of the L2 norms (llama.cpp: the rms epsilon) */
} sy_gated_delta_net_args;

typedef enum sy_norm_kind {
  SY_NORM_RMS = 0, /* y = x / sqrt(mean(x^2) + eps) */
  SY_NORM_L2 = 1,  /* y = x / max(sqrt(sum(x^2)), eps) (ggml_l2_norm) */
  SY_NORM_KIND_FORCE_32BIT = 0x7fffffff
} sy_norm_kind;

/* A normalisation of every row of x{n, rows}, then (when w is given) a multiplication by a
 * column of w{n, groups}: row r by column r mod groups. groups 1 is rms_norm's weight; Mamba-2's
 * grouped norm views its {d_inner, T} activations as {d_inner / G, G * T} with w {d_inner / G, G};
 * a per-head norm without weight (w NULL) is Gemma 4's value norm. In F32: the sum of squares,
 * then the scale, then (x * scale) * w. y may alias x. */
typedef struct sy_norm_args {
  uint32_t struct_size;
  uint32_t kind;      /* sy_norm_kind; an unknown value is SY_ERR_INVALID_ARG */
  const sy_tensor* x; /* F32 {n, rows} */
  const sy_tensor* w; /* F32 {n, groups} with rows a multiple of groups, or NULL */
  const sy_tensor* y; /* F32 {n, rows} */
  float eps;
  uint32_t reserved0;
} sy_norm_args;

typedef enum sy_unary_kind {
  SY_UNARY_SIGMOID = 0,  /* y = 1 / (1 + exp(-x)) */
  SY_UNARY_RELU_SQR = 1, /* y = max(x, 0)^2 (Nemotron-H's FFN: ggml_relu then ggml_sqr) */
  /* since 1.6 (a plugin that negotiated 1.5 refuses them as unknown kinds): */
  SY_UNARY_GELU = 2, /* y = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Gemma's GEGLU) */
  SY_UNARY_TANH = 3, /* y = tanh(x) (Gemma's final-logit soft-capping) */
  SY_UNARY_KIND_FORCE_32BIT = 0x7fffffff
} sy_unary_kind;

/* ---- Argument structs since 1.6 ---- */

/* gpt-oss's clamped SwiGLU (ggml_swiglu_oai), element-wise in F32 over same-shaped tensors:
 *   x = min(g, limit), u' = clamp(u, -limit, limit), y = x / (1 + exp(-alpha x)) * (u' + 1).
 * y may alias g or u. */
typedef struct sy_swiglu_oai_args {
  uint32_t struct_size;
  uint32_t reserved0;
  const sy_tensor* g; /* F32: the gate */
  const sy_tensor* u; /* F32: the up projection, g's shape */
  const sy_tensor* y; /* F32, g's shape */
  float alpha;        /* gpt-oss: 1.702 */
  float limit;        /* gpt-oss: 7 */
} sy_swiglu_oai_args;

/* y = f(x) element-wise, F32, for the kind's f. y may alias x. */
typedef struct sy_unary_args {
  uint32_t struct_size;
  uint32_t kind;      /* sy_unary_kind; an unknown value is SY_ERR_INVALID_ARG */
  const sy_tensor* x; /* F32 */
  const sy_tensor* y; /* F32, the shape of x */
} sy_unary_args;

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
  /* Waits for all queued work; buffer_read results are valid after it. An op may return before
   * its output is written, on a CPU backend too (cpu_onednn queues small matmuls to run them
   * together): memory read through a host pointer or a wrapped host buffer holds the results
   * after synchronize. */
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
  /* Row-wise softmax of x{n, rows} into y (may alias). Optional since 1.3: no model calls it,
   * so a backend may leave it NULL and the host never requires it. */
  sy_status (*softmax)(sy_backend_t backend, const sy_tensor* x, const sy_tensor* y);
  sy_status (*kv_store)(sy_backend_t backend, const sy_kv_store_args* args);
  sy_status (*attention)(sy_backend_t backend, const sy_attention_args* args);

  /* ---- since 1.1 (optional; read only when struct_size covers them) ---- */
  /* Cost model for schedulers: estimated wall time of one step of the given shape on this
   * backend, in nanoseconds. NULL: the host estimates from a calibration run. */
  sy_status (*estimate_step_ns)(sy_backend_t backend, const sy_step_shape* shape, int64_t* out_ns);

  /* ---- since 1.1: hybrid (SSM + MoE) ops; NULL when not implemented ---- */
  sy_status (*ssm_conv)(sy_backend_t backend, const sy_ssm_conv_args* args);
  sy_status (*ssm_scan)(sy_backend_t backend, const sy_ssm_scan_args* args);
  sy_status (*moe_gate)(sy_backend_t backend, const sy_moe_gate_args* args);
  sy_status (*moe_matmul)(sy_backend_t backend, const sy_moe_matmul_args* args);
  /* Weighted sum of expert outputs: y[:, t] = sum_{j=0}^{k-1} weights[j, t] * x[:, j, t], summed
   * in slot order j = 0, 1, ... (llama.cpp's order). x F32 {N, k, n_tokens}, weights F32
   * {k, n_tokens} (the moe_gate output), y F32 {N, n_tokens}; y may not alias x. */
  sy_status (*moe_combine)(sy_backend_t backend, const sy_tensor* x, const sy_tensor* weights,
                           const sy_tensor* y);

  /* ---- since 1.3 ---- */
  /* Optional: a model that needs them (RoPE frequency factors or YaRN; projection biases or
   * `.scale` multipliers) is refused on a backend without them, naming the op. */
  sy_status (*rope_ext)(sy_backend_t backend, const sy_rope_ext_args* args);
  sy_status (*bias_scale)(sy_backend_t backend, const sy_bias_scale_args* args);

  /* ---- since 1.4 ---- */
  /* Optional: offers a weight that from now on is only ever the w operand of matmul, for a
   * layout of the backend's own (llama.cpp's repacked CPU weights: rows interleaved so that one
   * vector load feeds several rows). On SY_OK with *out set, the backend wrote w's values in its
   * layout into the new buffer *out, owned by the caller (buffer_free); the caller then passes
   * {*out, offset 0, w's dtype and shape} as matmul's w, which gives w's results within the
   * dtype's tolerance. Such a buffer may not be read, written, mapped (buffer_host_ptr is NULL)
   * or given to any other op: each refuses it with SY_ERR_INVALID_ARG. *out = NULL: the backend
   * has no layout of its own for w; keep using w. w itself is left as it was. */
  sy_status (*weight_pack)(sy_backend_t backend, const sy_tensor* w, sy_buffer_t* out);

  /* ---- since 1.5: the 2026 hybrid families (Mamba-2, gated delta nets, short convolutions) ----
   * Optional: a model that needs one is refused on a backend without it, naming the op. A
   * plugin that negotiates 1.5 also honours the 1.5 members of sy_attention_args (window),
   * sy_moe_gate_args (sigmoid gating, selection_bias) and sy_moe_matmul_args (expert_stride,
   * bias, scale); the host sends nonzero values there only to such plugins. */
  sy_status (*ssm_scan2)(sy_backend_t backend, const sy_ssm_scan2_args* args);
  sy_status (*gated_delta_net)(sy_backend_t backend, const sy_gated_delta_net_args* args);
  sy_status (*norm)(sy_backend_t backend, const sy_norm_args* args);
  /* y = a * b element-wise, F32; b is a's shape, or {1, rows...}: one value per row of a
   * (ggml_mul's broadcast). y may alias a or b. */
  sy_status (*mul)(sy_backend_t backend, const sy_tensor* a, const sy_tensor* b,
                   const sy_tensor* y);
  sy_status (*unary)(sy_backend_t backend, const sy_unary_args* args);

  /* ---- since 1.6: the dense families' ops (Gemma's unary kinds, gpt-oss) ----
   * Optional, as the 1.5 block. A plugin that negotiates 1.6 also honours the GELU and TANH
   * unary kinds and sy_attention_args.sinks and softcap; the host sends them only to such
   * plugins. */
  sy_status (*swiglu_oai)(sy_backend_t backend, const sy_swiglu_oai_args* args);
} sy_backend_iface;

/* Size of the 1.0 table: a plugin built against 1.0 reports this struct_size. */
#define SY_BACKEND_IFACE_SIZE_1_0 offsetof(sy_backend_iface, estimate_step_ns)

#ifdef __cplusplus
}
#endif
#endif
