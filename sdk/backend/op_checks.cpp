#include "op_checks.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <utility>

#include "switchyard/common/dtype.h"

namespace sy::plugin::checks {
namespace {

// Checks of one op; every failure throws Error prefixed with the op's name.
class Checker {
 public:
  Checker(const Backend& be, const char* op) : be_(be), op_(op) {}

  [[noreturn]] __attribute__((format(printf, 3, 4))) void fail(sy_status status, const char* f,
                                                               ...) const {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    throw Error(status, std::string(op_) + ": " + buf);
  }

  // An F32 activation tensor.
  Tensor f32(const char* name, const sy_tensor* t) const {
    header(name, t);
    if (t->dtype != SY_DTYPE_F32)
      fail(SY_ERR_INVALID_ARG, "%s has dtype %u (%s), expected F32 (0)", name, t->dtype,
           dtype::name(t->dtype));
    return resolve(name, t);
  }

  // An I32 index tensor.
  Tensor i32(const char* name, const sy_tensor* t) const {
    header(name, t);
    if (t->dtype != SY_DTYPE_I32)
      fail(SY_ERR_INVALID_ARG, "%s has dtype %u (%s), expected I32 (26)", name, t->dtype,
           dtype::name(t->dtype));
    return resolve(name, t);
  }

  // A KV cache tensor: F32, or another dtype the backend reports in kv_dtypes.
  Tensor kv_cache(const char* name, const sy_tensor* t) const {
    header(name, t);
    const uint64_t mask = (be_.desc ? be_.desc->kv_dtypes : 0) | (1ull << SY_DTYPE_F32);
    if (t->dtype >= 64 || !((mask >> t->dtype) & 1u) || !dtype::is_known(t->dtype))
      fail(SY_ERR_INVALID_ARG, "%s has dtype %u (%s), expected %s", name, t->dtype,
           dtype::name(t->dtype), (mask >> SY_DTYPE_F16) & 1u ? "F32 (0) or F16 (1)" : "F32 (0)");
    return resolve(name, t);
  }
  void same_dtype(const char* an, const Tensor& a, const char* bn, const Tensor& b) const {
    if (a.dtype != b.dtype)
      fail(SY_ERR_INVALID_ARG, "%s has dtype %s but %s has %s", an, dtype::name(a.dtype), bn,
           dtype::name(b.dtype));
  }

  // A weight tensor of any dtype the backend accepts; `label` names it in the dtype message.
  // packed_ok: it may be a weight_pack result (matmul's w only).
  Tensor weight(const char* name, const char* label, const sy_tensor* t,
                bool packed_ok = false) const {
    header(name, t);
    const uint64_t mask = be_.desc ? be_.desc->weight_dtypes : 0;
    if (t->dtype >= 64 || !((mask >> t->dtype) & 1u) || !dtype::is_known(t->dtype))
      fail(SY_ERR_UNSUPPORTED, "%s dtype %u not supported", label, t->dtype);
    return resolve(name, t, packed_ok);
  }

  // A weight of n_expert matrices {K, N} whose expert e starts `stride` bytes after expert e - 1
  // (moe_matmul's expert_stride, 1.5): each matrix is checked as a tensor of its own, so the
  // buffer must hold [offset, offset + (n_expert - 1) * stride + N * row_bytes(K)).
  Tensor strided_weight(const char* name, const sy_tensor* t, uint64_t stride) const {
    header(name, t);
    const uint64_t mask = be_.desc ? be_.desc->weight_dtypes : 0;
    if (t->dtype >= 64 || !((mask >> t->dtype) & 1u) || !dtype::is_known(t->dtype))
      fail(SY_ERR_UNSUPPORTED, "weight dtype %u not supported", t->dtype);
    sy_tensor first = *t;
    first.ne[2] = first.ne[3] = 1;
    Tensor out = resolve(name, &first);
    const int64_t n_expert = t->ne[2];
    if (n_expert < 0 || t->ne[3] != 1)
      fail(SY_ERR_INVALID_ARG, "%s has ne[2]=%" PRId64 " ne[3]=%" PRId64, name, t->ne[2], t->ne[3]);
    const uint64_t matrix = (uint64_t)nbytes(out);
    if (stride < matrix || stride % 2 != 0)
      fail(SY_ERR_INVALID_ARG,
           "expert_stride=%" PRIu64 " must be even and at least one expert's %" PRIu64 " bytes",
           stride, matrix);
    if (n_expert > 1) {
      sy_tensor last = first;
      const unsigned __int128 off =
          (unsigned __int128)t->offset + (unsigned __int128)stride * (uint64_t)(n_expert - 1);
      if (off > UINT64_MAX) fail(SY_ERR_INVALID_ARG, "%s: expert_stride overflows", name);
      last.offset = (uint64_t)off;
      resolve(name, &last);
    }
    out.ne[2] = n_expert;
    return out;
  }

  void same(const char* an, const Tensor& a, int i, const char* bn, const Tensor& b, int j) const {
    if (a.ne[i] != b.ne[j])
      fail(SY_ERR_INVALID_ARG, "%s has ne[%d]=%" PRId64 " but %s has ne[%d]=%" PRId64, an, i,
           a.ne[i], bn, j, b.ne[j]);
  }
  void same_shape(const char* an, const Tensor& a, const char* bn, const Tensor& b) const {
    for (int i = 0; i < 4; ++i) same(an, a, i, bn, b, i);
  }
  void dim_is(const char* name, const Tensor& t, int i, int64_t v) const {
    if (t.ne[i] != v)
      fail(SY_ERR_INVALID_ARG, "%s has ne[%d]=%" PRId64 ", expected %" PRId64, name, i, t.ne[i], v);
  }
  void at_most_2d(const char* name, const Tensor& t) const {
    dim_is(name, t, 2, 1);
    dim_is(name, t, 3, 1);
  }
  // An output that may not share any byte with an input.
  void disjoint(const char* an, const Tensor& a, const char* bn, const Tensor& b) const {
    if (overlap(a, b)) fail(SY_ERR_INVALID_ARG, "%s overlaps %s", an, bn);
  }
  // An output that may be the very same tensor as an input, but not a shifted view of it.
  void alias_or_disjoint(const char* an, const Tensor& a, const char* bn, const Tensor& b) const {
    if (a.data != b.data && overlap(a, b))
      fail(SY_ERR_INVALID_ARG, "%s partially overlaps %s", an, bn);
  }
  void finite(const char* name, float v) const {
    if (!std::isfinite(v)) fail(SY_ERR_INVALID_ARG, "%s=%g must be finite", name, (double)v);
  }
  void args_header(const void* args, uint32_t struct_size, size_t need) const {
    if (!args) fail(SY_ERR_INVALID_ARG, "args is NULL");
    if (struct_size < need)
      fail(SY_ERR_INVALID_ARG, "args has struct_size %u, expected at least %zu", struct_size, need);
  }

 private:
  static bool overlap(const Tensor& a, const Tensor& b) {
    const auto a0 = (uintptr_t)a.data, b0 = (uintptr_t)b.data;
    const auto a1 = a0 + (uintptr_t)nbytes(a), b1 = b0 + (uintptr_t)nbytes(b);
    return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
  }

  void header(const char* name, const sy_tensor* t) const {
    if (!t) fail(SY_ERR_INVALID_ARG, "%s is NULL", name);
    if (t->struct_size < sizeof(sy_tensor))
      fail(SY_ERR_INVALID_ARG, "%s has struct_size %u, expected at least %zu", name, t->struct_size,
           sizeof(sy_tensor));
  }

  Tensor resolve(const char* name, const sy_tensor* t, bool packed_ok = false) const {
    for (int i = 0; i < 4; ++i)
      if (t->ne[i] < 0)
        fail(SY_ERR_INVALID_ARG, "%s has ne[%d]=%" PRId64 ", expected >= 0", name, i, t->ne[i]);
    const int64_t be = dtype::block_elems(t->dtype);
    if (t->ne[0] % be != 0)
      fail(SY_ERR_INVALID_ARG,
           "%s has ne[0]=%" PRId64 ", not a multiple of the %s block size %" PRId64, name, t->ne[0],
           dtype::name(t->dtype), be);
    if (!t->buffer) fail(SY_ERR_INVALID_ARG, "%s has no buffer", name);
    auto* buf = reinterpret_cast<Buffer*>(t->buffer);
    if (!be_.buffers.count(buf))
      fail(SY_ERR_INVALID_ARG, "%s buffer is not a live buffer of this backend", name);
    if (buf->packed && !packed_ok)
      fail(SY_ERR_INVALID_ARG, "%s is a packed weight (weight_pack): only matmul's w may read it",
           name);
    // 128-bit arithmetic so that absurd shapes report a range error instead of wrapping.
    unsigned __int128 bytes =
        (unsigned __int128)(t->ne[0] / be) * (uint64_t)dtype::block_bytes(t->dtype);
    for (int i = 1; i < 4; ++i) bytes *= (uint64_t)t->ne[i];
    if (t->offset > buf->size || bytes > buf->size - t->offset)
      fail(SY_ERR_INVALID_ARG,
           "%s needs %s bytes at offset %" PRIu64 " but its buffer has %" PRIu64, name,
           u128(bytes).c_str(), t->offset, buf->size);
    Tensor out;
    out.dtype = t->dtype;
    out.data = static_cast<uint8_t*>(buf->data) + t->offset;
    out.packed = buf->packed;
    for (int i = 0; i < 4; ++i) out.ne[i] = t->ne[i];
    // Kernels use typed pointers; a misaligned float* is undefined behaviour in C++. MXFP4's
    // 17-byte blocks are bytes only, so its rows may start anywhere.
    const unsigned align = t->dtype == SY_DTYPE_F32 || t->dtype == SY_DTYPE_I32 ? 4
                           : t->dtype == SY_DTYPE_MXFP4                         ? 1
                                                                                : 2;
    if (bytes > 0 && (uintptr_t)out.data % align != 0)
      fail(SY_ERR_INVALID_ARG, "%s data at offset %" PRIu64 " is not %u-byte aligned", name,
           t->offset, align);
    return out;
  }

  static std::string u128(unsigned __int128 v) {
    std::string s;
    do {
      s.insert(s.begin(), char('0' + (int)(v % 10)));
      v /= 10;
    } while (v);
    return s;
  }

  const Backend& be_;
  const char* op_;
};

// seq_token_start of attention and the SSM ops: n_seqs + 1 offsets ascending from 0 to n_tokens;
// `what` names whose tokens they count in the message ("q has", "the batch has").
void check_seq_token_start(const Checker& c, uint32_t n_seqs, const uint32_t* st, int64_t n_tokens,
                           const char* what) {
  if (!st) c.fail(SY_ERR_INVALID_ARG, "seq_token_start is NULL");
  if (st[0] != 0) c.fail(SY_ERR_INVALID_ARG, "seq_token_start[0]=%u, expected 0", st[0]);
  for (uint32_t s = 0; s < n_seqs; ++s)
    if (st[s + 1] < st[s])
      c.fail(SY_ERR_INVALID_ARG, "seq_token_start[%u]=%u is below seq_token_start[%u]=%u", s + 1,
             st[s + 1], s, st[s]);
  if ((int64_t)st[n_seqs] != n_tokens)
    c.fail(SY_ERR_INVALID_ARG, "seq_token_start[%u]=%u but %s %" PRId64 " tokens", n_seqs,
           st[n_seqs], what, n_tokens);
}

}  // namespace

int64_t nbytes(const Tensor& t) {
  return dtype::row_bytes(t.dtype, t.ne[0]) * t.rows();
}

GetRowsArgs get_rows(const Backend& be, const sy_tensor* table, const int32_t* ids, uint32_t n,
                     const sy_tensor* dst) {
  Checker c(be, "get_rows");
  GetRowsArgs a{c.weight("table", "table", table), c.f32("dst", dst)};
  c.at_most_2d("table", a.table);
  c.same("dst", a.dst, 0, "table", a.table, 0);
  if (a.dst.ne[1] != (int64_t)n)
    c.fail(SY_ERR_INVALID_ARG, "dst has ne[1]=%" PRId64 " but n=%u", a.dst.ne[1], n);
  c.at_most_2d("dst", a.dst);
  if (n > 0 && !ids) c.fail(SY_ERR_INVALID_ARG, "ids is NULL");
  for (uint32_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= a.table.ne[1])
      c.fail(SY_ERR_INVALID_ARG, "ids[%u]=%d is out of range [0, %" PRId64 ")", i, ids[i],
             a.table.ne[1]);
  c.disjoint("dst", a.dst, "table", a.table);
  return a;
}

MatmulArgs matmul(const Backend& be, const sy_tensor* x, const sy_tensor* w, const sy_tensor* y) {
  Checker c(be, "matmul");
  MatmulArgs a{c.f32("x", x), c.weight("w", "weight", w, true), c.f32("y", y)};
  c.same("x", a.x, 0, "w", a.w, 0);
  c.at_most_2d("w", a.w);
  c.same("y", a.y, 0, "w", a.w, 1);
  for (int i = 1; i < 4; ++i) c.same("y", a.y, i, "x", a.x, i);
  c.disjoint("y", a.y, "x", a.x);
  c.disjoint("y", a.y, "w", a.w);
  return a;
}

Tensor weight_pack(const Backend& be, const sy_tensor* w, sy_buffer_t* out) {
  Checker c(be, "weight_pack");
  if (!out) c.fail(SY_ERR_INVALID_ARG, "out is NULL");
  *out = nullptr;
  const Tensor t = c.weight("w", "weight", w);
  c.at_most_2d("w", t);
  return t;
}

RmsNormArgs rms_norm(const Backend& be, const sy_tensor* x, const sy_tensor* w, float eps,
                     const sy_tensor* y) {
  Checker c(be, "rms_norm");
  RmsNormArgs a{c.f32("x", x), c.f32("w", w), c.f32("y", y)};
  c.same("w", a.w, 0, "x", a.x, 0);
  for (int i = 1; i < 4; ++i) c.dim_is("w", a.w, i, 1);
  c.same_shape("y", a.y, "x", a.x);
  if (!(eps >= 0.0f) || !std::isfinite(eps))
    c.fail(SY_ERR_INVALID_ARG, "eps=%g must be finite and >= 0", (double)eps);
  c.alias_or_disjoint("y", a.y, "x", a.x);
  c.disjoint("y", a.y, "w", a.w);
  return a;
}

// What rope and rope_ext share: x, pos, mode, n_rot, freq_base and freq_scale.
static Tensor rope_common(const Checker& c, const sy_tensor* x, const int32_t* pos, uint32_t n_rot,
                          float freq_base, float freq_scale, uint32_t mode) {
  Tensor t = c.f32("x", x);
  c.dim_is("x", t, 3, 1);
  if (t.ne[2] > 0 && !pos) c.fail(SY_ERR_INVALID_ARG, "pos is NULL");
  if (mode != SY_ROPE_NORM && mode != SY_ROPE_NEOX)
    c.fail(SY_ERR_UNSUPPORTED, "mode %u not supported", mode);
  if (n_rot == 0 || n_rot % 2 != 0 || (int64_t)n_rot > t.ne[0])
    c.fail(SY_ERR_INVALID_ARG, "n_rot=%u must be even, positive and at most head_dim=%" PRId64,
           n_rot, t.ne[0]);
  if (!(freq_base > 0.0f) || !std::isfinite(freq_base))
    c.fail(SY_ERR_INVALID_ARG, "freq_base=%g must be finite and positive", (double)freq_base);
  c.finite("freq_scale", freq_scale);
  return t;
}

Tensor rope(const Backend& be, const sy_tensor* x, const int32_t* pos, uint32_t n_rot,
            float freq_base, float freq_scale, uint32_t mode) {
  return rope_common(Checker(be, "rope"), x, pos, n_rot, freq_base, freq_scale, mode);
}

RopeExtOp rope_ext(const Backend& be, const sy_rope_ext_args* args) {
  Checker c(be, "rope_ext");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_rope_ext_args));
  RopeExtOp op{};
  op.x = rope_common(c, args->x, args->pos, args->n_rot, args->freq_base, args->freq_scale,
                     args->mode);
  op.pos = args->pos;
  op.mode = args->mode;
  op.n_rot = args->n_rot;
  op.n_ctx_orig = args->n_ctx_orig;
  op.freq_base = args->freq_base;
  op.freq_scale = args->freq_scale;
  op.ext_factor = args->ext_factor;
  op.attn_factor = args->attn_factor;
  op.beta_fast = args->beta_fast;
  op.beta_slow = args->beta_slow;
  c.finite("ext_factor", op.ext_factor);
  c.finite("attn_factor", op.attn_factor);
  if (op.ext_factor != 0.0f) {
    c.finite("beta_fast", op.beta_fast);
    c.finite("beta_slow", op.beta_slow);
    if (op.n_ctx_orig == 0 || !(op.beta_fast > 0.0f) || !(op.beta_slow > 0.0f))
      c.fail(SY_ERR_INVALID_ARG,
             "YaRN (ext_factor=%g) needs n_ctx_orig, beta_fast and beta_slow > 0, got %u, %g, %g",
             (double)op.ext_factor, op.n_ctx_orig, (double)op.beta_fast, (double)op.beta_slow);
    if (!(op.freq_scale > 0.0f))
      c.fail(SY_ERR_INVALID_ARG, "YaRN needs freq_scale > 0, got %g", (double)op.freq_scale);
  }
  if (args->freq_factors) {
    const Tensor ff = c.f32("freq_factors", args->freq_factors);
    c.dim_is("freq_factors", ff, 0, op.n_rot / 2);
    for (int i = 1; i < 4; ++i) c.dim_is("freq_factors", ff, i, 1);
    c.disjoint("x", op.x, "freq_factors", ff);
    op.freq_factors = ff.f32();
  }
  return op;
}

BiasScaleOp bias_scale(const Backend& be, const sy_bias_scale_args* args) {
  Checker c(be, "bias_scale");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_bias_scale_args));
  if (args->order != SY_SCALE_THEN_BIAS && args->order != SY_BIAS_THEN_SCALE)
    c.fail(SY_ERR_INVALID_ARG, "order %u is not a sy_bias_scale_order", args->order);
  BiasScaleOp op{c.f32("x", args->x), c.f32("y", args->y), nullptr, args->scale,
                 args->order == SY_BIAS_THEN_SCALE};
  c.same_shape("y", op.y, "x", op.x);
  c.alias_or_disjoint("y", op.y, "x", op.x);
  c.finite("scale", op.scale);
  if (args->bias) {
    const Tensor b = c.f32("bias", args->bias);
    c.same("bias", b, 0, "x", op.x, 0);
    for (int i = 1; i < 4; ++i) c.dim_is("bias", b, i, 1);
    c.disjoint("y", op.y, "bias", b);
    op.bias = b.f32();
  }
  return op;
}

static BinaryArgs binary(const Backend& be, const char* op, const char* an, const char* bn,
                         const sy_tensor* a, const sy_tensor* b, const sy_tensor* y) {
  Checker c(be, op);
  BinaryArgs r{c.f32(an, a), c.f32(bn, b), c.f32("y", y)};
  c.same_shape(bn, r.b, an, r.a);
  c.same_shape("y", r.y, an, r.a);
  c.alias_or_disjoint("y", r.y, an, r.a);
  c.alias_or_disjoint("y", r.y, bn, r.b);
  return r;
}

BinaryArgs add(const Backend& be, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y) {
  return binary(be, "add", "a", "b", a, b, y);
}

BinaryArgs swiglu(const Backend& be, const sy_tensor* gate, const sy_tensor* up,
                  const sy_tensor* y) {
  return binary(be, "swiglu", "gate", "up", gate, up, y);
}

UnaryArgs softmax(const Backend& be, const sy_tensor* x, const sy_tensor* y) {
  Checker c(be, "softmax");
  UnaryArgs a{c.f32("x", x), c.f32("y", y)};
  c.same_shape("y", a.y, "x", a.x);
  c.alias_or_disjoint("y", a.y, "x", a.x);
  return a;
}

KvStoreOp kv_store(const Backend& be, const sy_kv_store_args* args) {
  Checker c(be, "kv_store");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_kv_store_args));
  KvStoreOp op{c.f32("k", args->k), c.f32("v", args->v), c.kv_cache("k_cache", args->k_cache),
               c.kv_cache("v_cache", args->v_cache), args->slots};
  c.same_dtype("v_cache", op.v_cache, "k_cache", op.k_cache);
  c.at_most_2d("k", op.k);
  c.at_most_2d("v", op.v);
  c.at_most_2d("k_cache", op.k_cache);
  c.at_most_2d("v_cache", op.v_cache);
  c.same("v", op.v, 1, "k", op.k, 1);
  c.same("k_cache", op.k_cache, 0, "k", op.k, 0);
  c.same("v_cache", op.v_cache, 0, "v", op.v, 0);
  c.same("v_cache", op.v_cache, 1, "k_cache", op.k_cache, 1);
  const int64_t n_tokens = op.k.ne[1], n_slots = op.k_cache.ne[1];
  if (n_tokens > 0 && !op.slots) c.fail(SY_ERR_INVALID_ARG, "slots is NULL");
  for (int64_t t = 0; t < n_tokens; ++t)
    if (op.slots[t] < 0 || op.slots[t] >= n_slots)
      c.fail(SY_ERR_INVALID_ARG, "slots[%" PRId64 "]=%d is out of range [0, %" PRId64 ")", t,
             op.slots[t], n_slots);
  c.disjoint("k_cache", op.k_cache, "v_cache", op.v_cache);
  c.disjoint("k_cache", op.k_cache, "k", op.k);
  c.disjoint("k_cache", op.k_cache, "v", op.v);
  c.disjoint("v_cache", op.v_cache, "k", op.k);
  c.disjoint("v_cache", op.v_cache, "v", op.v);
  return op;
}

// Whether the args struct covers a member (one added in a later minor than the struct's first).
#define SY_ARGS_COVER(args, type, field) \
  ((args)->struct_size >= offsetof(type, field) + sizeof(decltype((args)->field)))

// A 1.5 member's value reaches a plugin that speaks 1.5 only (PluginDesc::hybrid2_ops).
void require_1_5(const Checker& c, const Backend& be, const char* what) {
  if (!(be.desc && be.desc->hybrid2_ops))
    c.fail(SY_ERR_UNSUPPORTED, "%s needs ABI 1.5, which %s does not implement", what,
           be.desc ? be.desc->name : "this backend");
}

AttentionOp attention(const Backend& be, const sy_attention_args* args) {
  Checker c(be, "attention");
  c.args_header(args, args ? args->struct_size : 0, offsetof(sy_attention_args, window));
  AttentionOp op{c.f32("q", args->q),
                 c.kv_cache("k_cache", args->k_cache),
                 c.kv_cache("v_cache", args->v_cache),
                 c.f32("out", args->out),
                 args->n_kv_head,
                 args->n_seqs,
                 args->seq_token_start,
                 args->token_pos,
                 args->block_tables,
                 args->max_blocks_per_seq,
                 args->block_size,
                 args->scale};
  const int64_t head_dim = op.q.ne[0], n_head = op.q.ne[1], n_tokens = op.q.ne[2];
  c.dim_is("q", op.q, 3, 1);
  c.same_shape("out", op.out, "q", op.q);
  if (op.n_kv_head == 0 || n_head % op.n_kv_head != 0)
    c.fail(SY_ERR_INVALID_ARG, "n_kv_head=%u must be positive and divide n_head=%" PRId64,
           op.n_kv_head, n_head);
  c.at_most_2d("k_cache", op.k_cache);
  c.at_most_2d("v_cache", op.v_cache);
  const int64_t kv_width = head_dim * op.n_kv_head;
  if (op.k_cache.ne[0] != kv_width)
    c.fail(SY_ERR_INVALID_ARG, "k_cache has ne[0]=%" PRId64 " but head_dim*n_kv_head=%" PRId64,
           op.k_cache.ne[0], kv_width);
  if (op.v_cache.ne[0] != kv_width)
    c.fail(SY_ERR_INVALID_ARG, "v_cache has ne[0]=%" PRId64 " but head_dim*n_kv_head=%" PRId64,
           op.v_cache.ne[0], kv_width);
  c.same("v_cache", op.v_cache, 1, "k_cache", op.k_cache, 1);
  c.same_dtype("v_cache", op.v_cache, "k_cache", op.k_cache);
  if (op.block_size == 0) c.fail(SY_ERR_INVALID_ARG, "block_size=0 must be positive");
  c.finite("scale", op.scale);
  if (SY_ARGS_COVER(args, sy_attention_args, window) && args->window != 0) {
    require_1_5(c, be, "a sliding window");
    if (args->window > INT32_MAX)
      c.fail(SY_ERR_INVALID_ARG, "window=%" PRIu64 " is above %d", args->window, INT32_MAX);
    op.window = static_cast<uint32_t>(args->window);
  }
  if (SY_ARGS_COVER(args, sy_attention_args, sinks) && args->sinks) {
    if (!(be.desc && be.desc->dense2_ops))
      c.fail(SY_ERR_UNSUPPORTED, "attention sinks need ABI 1.6, which %s does not implement",
             be.desc ? be.desc->name : "this backend");
    const Tensor s = c.f32("sinks", args->sinks);
    c.dim_is("sinks", s, 1, 1);
    if (s.ne[0] != n_head)
      c.fail(SY_ERR_INVALID_ARG, "sinks has ne[0]=%" PRId64 " but q has %" PRId64 " heads", s.ne[0],
             n_head);
    op.sinks = s.f32();
  }
  if (SY_ARGS_COVER(args, sy_attention_args, softcap) && args->softcap != 0.0f) {
    if (!(be.desc && be.desc->dense2_ops))
      c.fail(SY_ERR_UNSUPPORTED,
             "attention logit soft-capping needs ABI 1.6, which %s does not implement",
             be.desc ? be.desc->name : "this backend");
    if (!(args->softcap > 0.0f) || !std::isfinite(args->softcap))
      c.fail(SY_ERR_INVALID_ARG, "softcap=%g must be a positive finite number or 0",
             (double)args->softcap);
    op.softcap = args->softcap;
  }

  const uint32_t* st = op.seq_token_start;
  check_seq_token_start(c, op.n_seqs, st, n_tokens, "q has");
  if (n_tokens > 0 && !op.token_pos) c.fail(SY_ERR_INVALID_ARG, "token_pos is NULL");
  if (n_tokens > 0 && !op.block_tables) c.fail(SY_ERR_INVALID_ARG, "block_tables is NULL");

  const int64_t n_blocks = op.k_cache.ne[1] / op.block_size;
  for (uint32_t s = 0; s < op.n_seqs; ++s) {
    int64_t last_block = -1;  // highest block index any token of s reads
    for (uint32_t t = st[s]; t < st[s + 1]; ++t) {
      const int32_t p = op.token_pos[t];
      if (p < 0) c.fail(SY_ERR_INVALID_ARG, "token_pos[%u]=%d is negative", t, p);
      const int64_t b = p / op.block_size;
      if (b >= op.max_blocks_per_seq)
        c.fail(SY_ERR_INVALID_ARG,
               "token_pos[%u]=%d needs block %" PRId64 " but max_blocks_per_seq=%u", t, p, b,
               op.max_blocks_per_seq);
      if (b > last_block) last_block = b;
    }
    for (int64_t b = 0; b <= last_block; ++b) {
      const uint64_t i = (uint64_t)s * op.max_blocks_per_seq + (uint64_t)b;
      const int32_t id = op.block_tables[i];
      if (id < 0 || id >= n_blocks)
        c.fail(SY_ERR_INVALID_ARG,
               "block_tables[%" PRIu64 "]=%d (sequence %u, block %" PRId64
               ") is out of range [0, %" PRId64 ")",
               i, id, s, b, n_blocks);
    }
  }
  c.disjoint("out", op.out, "q", op.q);
  c.disjoint("out", op.out, "k_cache", op.k_cache);
  c.disjoint("out", op.out, "v_cache", op.v_cache);
  return op;
}

// ---- 1.1 hybrid ops ----

namespace {

// seq_token_start and state_slots of an SSM op: offsets ascending from 0 to n_tokens, slots in
// range and distinct (two sequences updating one state row would race).
void check_seq_slots(const Checker& c, uint32_t n_seqs, const uint32_t* st, const int32_t* slots,
                     int64_t n_tokens, int64_t n_slots) {
  check_seq_token_start(c, n_seqs, st, n_tokens, "the batch has");
  if (n_seqs > 0 && !slots) c.fail(SY_ERR_INVALID_ARG, "state_slots is NULL");
  for (uint32_t s = 0; s < n_seqs; ++s) {
    if (slots[s] < 0 || slots[s] >= n_slots)
      c.fail(SY_ERR_INVALID_ARG, "state_slots[%u]=%d is out of range [0, %" PRId64 ")", s, slots[s],
             n_slots);
    for (uint32_t r = 0; r < s; ++r)
      if (slots[r] == slots[s])
        c.fail(SY_ERR_INVALID_ARG, "state_slots[%u] and state_slots[%u] are both %d", r, s,
               slots[s]);
  }
}

// An optional F32 vector of n values; nullptr when t is NULL.
const float* optional_vec(const Checker& c, const char* name, const sy_tensor* t, int64_t n) {
  if (!t) return nullptr;
  Tensor v = c.f32(name, t);
  c.dim_is(name, v, 0, n);
  for (int i = 1; i < 4; ++i) c.dim_is(name, v, i, 1);
  return v.f32();
}

// An optional gate z shaped as `like` and apart from y; nullptr when absent.
const float* optional_gate(const Checker& c, const sy_tensor* t, const char* like_name,
                           const Tensor& like, const Tensor& y) {
  if (!t) return nullptr;
  Tensor z = c.f32("z", t);
  c.same_shape("z", z, like_name, like);
  c.disjoint("y", y, "z", z);
  return z.f32();
}

}  // namespace

SsmConvOp ssm_conv(const Backend& be, const sy_ssm_conv_args* args) {
  Checker c(be, "ssm_conv");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_ssm_conv_args));
  SsmConvOp op{c.f32("x", args->x),
               c.f32("weight", args->weight),
               c.f32("state", args->state),
               c.f32("y", args->y),
               nullptr,
               args->n_seqs,
               args->seq_token_start,
               args->state_slots,
               args->apply_silu != 0};
  c.at_most_2d("x", op.x);
  c.at_most_2d("weight", op.weight);
  const int64_t channels = op.x.ne[0], k = op.weight.ne[0];
  if (k < 1) c.fail(SY_ERR_INVALID_ARG, "weight has ne[0]=0, expected d_conv >= 1");
  c.same("weight", op.weight, 1, "x", op.x, 0);
  c.dim_is("state", op.state, 0, k - 1);
  c.same("state", op.state, 1, "x", op.x, 0);
  c.dim_is("state", op.state, 3, 1);
  c.same_shape("y", op.y, "x", op.x);
  op.bias = optional_vec(c, "bias", args->bias, channels);
  check_seq_slots(c, op.n_seqs, op.seq_token_start, op.state_slots, op.x.ne[1], op.state.ne[2]);
  c.disjoint("y", op.y, "x", op.x);
  c.disjoint("y", op.y, "weight", op.weight);
  c.disjoint("y", op.y, "state", op.state);
  c.disjoint("state", op.state, "x", op.x);
  return op;
}

SsmScanOp ssm_scan(const Backend& be, const sy_ssm_scan_args* args) {
  Checker c(be, "ssm_scan");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_ssm_scan_args));
  SsmScanOp op{c.f32("u", args->u),
               c.f32("dt", args->dt),
               c.f32("a", args->a),
               c.f32("b", args->b),
               c.f32("c", args->c),
               c.f32("state", args->state),
               c.f32("y", args->y),
               nullptr,
               nullptr,
               nullptr,
               args->n_seqs,
               args->seq_token_start,
               args->state_slots};
  c.at_most_2d("u", op.u);
  const int64_t d_inner = op.u.ne[0], n_tokens = op.u.ne[1], d_state = op.a.ne[0];
  c.same_shape("dt", op.dt, "u", op.u);
  c.at_most_2d("a", op.a);
  c.same("a", op.a, 1, "u", op.u, 0);
  c.at_most_2d("b", op.b);
  c.same("b", op.b, 0, "a", op.a, 0);
  c.same("b", op.b, 1, "u", op.u, 1);
  c.same_shape("c", op.c, "b", op.b);
  c.dim_is("state", op.state, 0, d_state);
  c.dim_is("state", op.state, 1, d_inner);
  c.dim_is("state", op.state, 3, 1);
  c.same_shape("y", op.y, "u", op.u);
  op.dt_bias = optional_vec(c, "dt_bias", args->dt_bias, d_inner);
  op.d = optional_vec(c, "d", args->d, d_inner);
  op.z = optional_gate(c, args->z, "u", op.u, op.y);
  check_seq_slots(c, op.n_seqs, op.seq_token_start, op.state_slots, n_tokens, op.state.ne[2]);
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"u", &op.u},
                                {"dt", &op.dt},
                                {"a", &op.a},
                                {"b", &op.b},
                                {"c", &op.c},
                                {"state", &op.state}})
    c.disjoint("y", op.y, name, *t);
  c.disjoint("state", op.state, "u", op.u);
  return op;
}

MoeGateOp moe_gate(const Backend& be, const sy_moe_gate_args* args) {
  Checker c(be, "moe_gate");
  c.args_header(args, args ? args->struct_size : 0, offsetof(sy_moe_gate_args, selection_bias));
  const bool v15 = be.desc && be.desc->hybrid2_ops;
  if (args->gating != SY_MOE_GATING_SOFTMAX && !(v15 && args->gating == SY_MOE_GATING_SIGMOID))
    c.fail(SY_ERR_UNSUPPORTED, "gating %u not supported (%s)", args->gating,
           v15 ? "1 = softmax, 2 = sigmoid" : "1 = softmax");
  MoeGateOp op{c.f32("logits", args->logits), c.i32("ids", args->ids),
               c.f32("weights", args->weights), args->normalize != 0, args->scale};
  op.gating = args->gating;
  c.at_most_2d("logits", op.logits);
  c.at_most_2d("ids", op.ids);
  const int64_t n_expert = op.logits.ne[0], k = op.ids.ne[0];
  if (k < 1 || k > n_expert)
    c.fail(SY_ERR_INVALID_ARG, "ids has ne[0]=%" PRId64 " experts per token, expected 1..%" PRId64,
           k, n_expert);
  c.same("ids", op.ids, 1, "logits", op.logits, 1);
  c.same_shape("weights", op.weights, "ids", op.ids);
  c.finite("scale", op.scale);
  c.disjoint("ids", op.ids, "logits", op.logits);
  c.disjoint("weights", op.weights, "logits", op.logits);
  c.disjoint("weights", op.weights, "ids", op.ids);
  if (SY_ARGS_COVER(args, sy_moe_gate_args, selection_bias) && args->selection_bias) {
    require_1_5(c, be, "selection_bias");
    op.selection_bias = optional_vec(c, "selection_bias", args->selection_bias, n_expert);
  }
  return op;
}

MoeMatmulOp moe_matmul(const Backend& be, const sy_moe_matmul_args* args) {
  Checker c(be, "moe_matmul");
  c.args_header(args, args ? args->struct_size : 0, offsetof(sy_moe_matmul_args, expert_stride));
  const bool v15 = SY_ARGS_COVER(args, sy_moe_matmul_args, scale);
  const uint64_t stride = v15 ? args->expert_stride : 0;
  if (stride != 0) require_1_5(c, be, "expert_stride");
  MoeMatmulOp op{c.f32("x", args->x),
                 stride ? c.strided_weight("w", args->w, stride) : c.weight("w", "weight", args->w),
                 c.i32("ids", args->ids), c.f32("y", args->y)};
  c.dim_is("w", op.w, 3, 1);
  op.expert_stride =
      stride ? stride : (uint64_t)dtype::row_bytes(op.w.dtype, op.w.ne[0]) * (uint64_t)op.w.ne[1];
  c.at_most_2d("ids", op.ids);
  const int64_t k = op.ids.ne[0], n_tokens = op.ids.ne[1], n_expert = op.w.ne[2];
  c.same("x", op.x, 0, "w", op.w, 0);
  if (op.x.ne[1] != 1 && op.x.ne[1] != k)
    c.fail(SY_ERR_INVALID_ARG, "x has ne[1]=%" PRId64 ", expected 1 or k=%" PRId64, op.x.ne[1], k);
  c.same("x", op.x, 2, "ids", op.ids, 1);
  c.dim_is("x", op.x, 3, 1);
  c.same("y", op.y, 0, "w", op.w, 1);
  c.dim_is("y", op.y, 1, k);
  c.dim_is("y", op.y, 2, n_tokens);
  c.dim_is("y", op.y, 3, 1);
  // A device backend's ids are not host memory; its kernel leaves rows of bad ids zero instead.
  const int32_t* ids = static_cast<const int32_t*>(op.ids.data);
  for (int64_t i = 0; !(be.desc && be.desc->device_memory) && i < k * n_tokens; ++i)
    if (ids[i] < 0 || ids[i] >= n_expert)
      c.fail(SY_ERR_INVALID_ARG, "ids[%" PRId64 "]=%d is out of range [0, %" PRId64 ")", i, ids[i],
             n_expert);
  c.disjoint("y", op.y, "x", op.x);
  c.disjoint("y", op.y, "w", op.w);
  c.disjoint("y", op.y, "ids", op.ids);
  if (v15 && args->bias) {
    require_1_5(c, be, "bias");
    const Tensor b = c.f32("bias", args->bias);
    c.same("bias", b, 0, "w", op.w, 1);
    c.dim_is("bias", b, 1, n_expert);
    c.dim_is("bias", b, 2, 1);
    c.dim_is("bias", b, 3, 1);
    c.disjoint("y", op.y, "bias", b);
    op.bias = b.f32();
  }
  if (v15 && args->scale) {
    require_1_5(c, be, "scale");
    op.scale = optional_vec(c, "scale", args->scale, n_expert);
  }
  return op;
}

BinaryArgs moe_combine(const Backend& be, const sy_tensor* x, const sy_tensor* weights,
                       const sy_tensor* y) {
  Checker c(be, "moe_combine");
  BinaryArgs r{c.f32("x", x), c.f32("weights", weights), c.f32("y", y)};
  c.dim_is("x", r.a, 3, 1);
  c.at_most_2d("weights", r.b);
  c.same("weights", r.b, 0, "x", r.a, 1);
  c.same("weights", r.b, 1, "x", r.a, 2);
  c.same("y", r.y, 0, "x", r.a, 0);
  c.same("y", r.y, 1, "x", r.a, 2);
  c.at_most_2d("y", r.y);
  c.disjoint("y", r.y, "x", r.a);
  c.disjoint("y", r.y, "weights", r.b);
  return r;
}

// ---- 1.5 ops ----

SsmScan2Op ssm_scan2(const Backend& be, const sy_ssm_scan2_args* args) {
  Checker c(be, "ssm_scan2");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_ssm_scan2_args));
  SsmScan2Op op{c.f32("xbc", args->xbc),
                c.f32("dt", args->dt),
                c.f32("a", args->a),
                c.f32("state", args->state),
                c.f32("y", args->y),
                nullptr,
                nullptr,
                nullptr,
                0,
                0,
                0,
                args->n_seqs,
                args->seq_token_start,
                args->state_slots};
  c.at_most_2d("xbc", op.xbc);
  c.at_most_2d("y", op.y);
  const int64_t d_inner = op.y.ne[0], n_tokens = op.y.ne[1];
  op.n_head = op.a.nelements();
  op.d_state = op.state.ne[0];
  if (op.n_head < 1 || d_inner % op.n_head != 0)
    c.fail(SY_ERR_INVALID_ARG,
           "a has %" PRId64 " values (heads), which must divide d_inner=%" PRId64, op.n_head,
           d_inner);
  if (op.d_state < 1) c.fail(SY_ERR_INVALID_ARG, "state has ne[0]=0, expected d_state >= 1");
  const int64_t extra = op.xbc.ne[0] - d_inner;
  if (extra <= 0 || extra % (2 * op.d_state) != 0)
    c.fail(SY_ERR_INVALID_ARG,
           "xbc has ne[0]=%" PRId64 ", expected d_inner=%" PRId64
           " + 2 * n_group * d_state=%" PRId64,
           op.xbc.ne[0], d_inner, op.d_state);
  op.n_group = extra / (2 * op.d_state);
  if (op.n_head % op.n_group != 0)
    c.fail(SY_ERR_INVALID_ARG, "n_group=%" PRId64 " must divide n_head=%" PRId64, op.n_group,
           op.n_head);
  c.same("xbc", op.xbc, 1, "y", op.y, 1);
  c.dim_is("dt", op.dt, 0, op.n_head);
  c.same("dt", op.dt, 1, "y", op.y, 1);
  c.at_most_2d("dt", op.dt);
  c.dim_is("state", op.state, 1, d_inner);
  c.dim_is("state", op.state, 3, 1);
  op.dt_bias = optional_vec(c, "dt_bias", args->dt_bias, op.n_head);
  op.d = optional_vec(c, "d", args->d, op.n_head);
  op.z = optional_gate(c, args->z, "y", op.y, op.y);
  check_seq_slots(c, op.n_seqs, op.seq_token_start, op.state_slots, n_tokens, op.state.ne[2]);
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"xbc", &op.xbc},
                                {"dt", &op.dt},
                                {"a", &op.a},
                                {"state", &op.state}})
    c.disjoint("y", op.y, name, *t);
  c.disjoint("state", op.state, "xbc", op.xbc);
  return op;
}

GatedDeltaNetOp gated_delta_net(const Backend& be, const sy_gated_delta_net_args* args) {
  Checker c(be, "gated_delta_net");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_gated_delta_net_args));
  GatedDeltaNetOp op{c.f32("qkv", args->qkv),
                     c.f32("alpha", args->alpha),
                     c.f32("beta", args->beta),
                     c.f32("state", args->state),
                     c.f32("y", args->y),
                     nullptr,
                     nullptr,
                     0,
                     0,
                     0,
                     args->head_map,
                     args->eps,
                     args->n_seqs,
                     args->seq_token_start,
                     args->state_slots};
  if (op.head_map != SY_GDN_HEADS_MODULO && op.head_map != SY_GDN_HEADS_BLOCKED)
    c.fail(SY_ERR_INVALID_ARG, "head_map %u is not a sy_gdn_head_map", op.head_map);
  if (!(op.eps >= 0.0f) || !std::isfinite(op.eps))
    c.fail(SY_ERR_INVALID_ARG, "eps=%g must be finite and >= 0", (double)op.eps);
  c.at_most_2d("qkv", op.qkv);
  c.at_most_2d("alpha", op.alpha);
  const int64_t S = op.state.ne[0], n_tokens = op.qkv.ne[1];
  op.head_dim = S;
  op.n_v_head = op.alpha.ne[0];
  if (S < 1 || op.n_v_head < 1)
    c.fail(SY_ERR_INVALID_ARG,
           "state has ne[0]=%" PRId64 " and alpha ne[0]=%" PRId64 ", expected both >= 1", S,
           op.n_v_head);
  const int64_t qk = op.qkv.ne[0] - op.n_v_head * S;
  if (qk <= 0 || qk % (2 * S) != 0)
    c.fail(SY_ERR_INVALID_ARG,
           "qkv has ne[0]=%" PRId64 ", expected (2 * n_k_head + n_v_head=%" PRId64 ") * S=%" PRId64,
           op.qkv.ne[0], op.n_v_head, S);
  op.n_k_head = qk / (2 * S);
  if (op.n_v_head % op.n_k_head != 0)
    c.fail(SY_ERR_INVALID_ARG, "n_k_head=%" PRId64 " must divide n_v_head=%" PRId64, op.n_k_head,
           op.n_v_head);
  c.same("alpha", op.alpha, 1, "qkv", op.qkv, 1);
  c.same_shape("beta", op.beta, "alpha", op.alpha);
  c.dim_is("state", op.state, 1, S);
  c.dim_is("state", op.state, 2, op.n_v_head);
  c.dim_is("y", op.y, 0, S);
  c.dim_is("y", op.y, 1, op.n_v_head);
  c.dim_is("y", op.y, 2, n_tokens);
  c.dim_is("y", op.y, 3, 1);
  if (!args->dt_bias) c.fail(SY_ERR_INVALID_ARG, "dt_bias is NULL");
  if (!args->a) c.fail(SY_ERR_INVALID_ARG, "a is NULL");
  op.dt_bias = optional_vec(c, "dt_bias", args->dt_bias, op.n_v_head);
  op.a = optional_vec(c, "a", args->a, op.n_v_head);
  check_seq_slots(c, op.n_seqs, op.seq_token_start, op.state_slots, n_tokens, op.state.ne[3]);
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"qkv", &op.qkv},
                                {"alpha", &op.alpha},
                                {"beta", &op.beta},
                                {"state", &op.state}})
    c.disjoint("y", op.y, name, *t);
  c.disjoint("state", op.state, "qkv", op.qkv);
  return op;
}

NormOp norm(const Backend& be, const sy_norm_args* args) {
  Checker c(be, "norm");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_norm_args));
  if (args->kind != SY_NORM_RMS && args->kind != SY_NORM_L2)
    c.fail(SY_ERR_INVALID_ARG, "kind %u is not a sy_norm_kind", args->kind);
  NormOp op{c.f32("x", args->x), c.f32("y", args->y), nullptr, 1, args->kind, args->eps};
  c.same_shape("y", op.y, "x", op.x);
  c.alias_or_disjoint("y", op.y, "x", op.x);
  if (!(op.eps >= 0.0f) || !std::isfinite(op.eps))
    c.fail(SY_ERR_INVALID_ARG, "eps=%g must be finite and >= 0", (double)op.eps);
  if (args->w) {
    const Tensor w = c.f32("w", args->w);
    c.same("w", w, 0, "x", op.x, 0);
    c.at_most_2d("w", w);
    op.groups = w.ne[1];
    if (op.groups < 1 || op.x.rows() % op.groups != 0)
      c.fail(SY_ERR_INVALID_ARG,
             "w has ne[1]=%" PRId64 " groups, which must divide x's %" PRId64 " rows", op.groups,
             op.x.rows());
    c.disjoint("y", op.y, "w", w);
    op.w = w.f32();
  }
  return op;
}

BinaryArgs mul(const Backend& be, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y) {
  Checker c(be, "mul");
  BinaryArgs r{c.f32("a", a), c.f32("b", b), c.f32("y", y)};
  if (r.b.ne[0] != 1 || r.a.ne[0] == 1) c.same("b", r.b, 0, "a", r.a, 0);
  for (int i = 1; i < 4; ++i) c.same("b", r.b, i, "a", r.a, i);
  c.same_shape("y", r.y, "a", r.a);
  c.alias_or_disjoint("y", r.y, "a", r.a);
  c.alias_or_disjoint("y", r.y, "b", r.b);
  return r;
}

UnaryOp unary(const Backend& be, const sy_unary_args* args) {
  Checker c(be, "unary");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_unary_args));
  // The 1.6 kinds are kinds only to a plugin that speaks 1.6 (PluginDesc::dense2_ops).
  const uint32_t last = be.desc && be.desc->dense2_ops ? SY_UNARY_TANH : SY_UNARY_RELU_SQR;
  if (args->kind > last) c.fail(SY_ERR_INVALID_ARG, "kind %u is not a sy_unary_kind", args->kind);
  UnaryOp op{c.f32("x", args->x), c.f32("y", args->y), args->kind};
  c.same_shape("y", op.y, "x", op.x);
  c.alias_or_disjoint("y", op.y, "x", op.x);
  return op;
}

SwigluOaiOp swiglu_oai(const Backend& be, const sy_swiglu_oai_args* args) {
  Checker c(be, "swiglu_oai");
  c.args_header(args, args ? args->struct_size : 0, sizeof(sy_swiglu_oai_args));
  SwigluOaiOp op{c.f32("g", args->g), c.f32("u", args->u), c.f32("y", args->y), args->alpha,
                 args->limit};
  c.same_shape("u", op.u, "g", op.g);
  c.same_shape("y", op.y, "g", op.g);
  c.alias_or_disjoint("y", op.y, "g", op.g);
  c.alias_or_disjoint("y", op.y, "u", op.u);
  c.finite("alpha", op.alpha);
  c.finite("limit", op.limit);
  return op;
}

}  // namespace sy::plugin::checks
