// A backend plugin on the SDK: the C entry point, version negotiation, last_error storage,
// exception fencing, buffer bookkeeping and argument validation live in the SDK once; a plugin
// supplies a PluginDesc and a Backend subclass whose kernels only ever see validated arguments.
// Linked as a static library (switchyard_sdk_backend) into each plugin (one copy per module).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "switchyard/abi/plugin.h"
#include "switchyard/common/backend_ops.h"
#include "switchyard/sdk/plugin.h"

namespace sy::plugin {

// A validated tensor: host address of its first element and its shape (contiguous, ggml order).
struct Tensor {
  uint32_t dtype = SY_DTYPE_F32;
  void* data = nullptr;
  int64_t ne[4] = {1, 1, 1, 1};
  bool packed = false;  // in the backend's own layout (weight_pack): only ever matmul's w

  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  int64_t nelements() const { return ne[0] * rows(); }
  float* f32() const { return static_cast<float*>(data); }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(data); }
};

struct KvStoreOp {
  Tensor k, v, k_cache, v_cache;  // k, v: {D, n_tokens}; caches: {D, n_slots}, F32 or F16
  const int32_t* slots;           // n_tokens entries, each in [0, n_slots)
};

struct AttentionOp {
  Tensor q, k_cache, v_cache, out;  // q, out: {head_dim, n_head, n_tokens}; caches F32 or F16
  uint32_t n_kv_head;               // divides n_head
  uint32_t n_seqs;
  const uint32_t* seq_token_start;  // n_seqs + 1 offsets, non-decreasing, last = n_tokens
  const int32_t* token_pos;         // >= 0; every block a token needs is a valid block id
  const int32_t* block_tables;
  uint32_t max_blocks_per_seq;
  uint32_t block_size;  // >= 1
  float scale;
  uint32_t window = 0;  // 1.5: 0, or the sliding window's length (see sy_attention_args)
  const float* sinks = nullptr;  // 1.6: n_head sink logits (device memory on a GPU), or none
  float softcap = 0.0f;          // 1.6: 0, or the logit soft-cap (see sy_attention_args)
};

// The 1.1 hybrid (SSM + MoE) ops, validated: see backend.h for the math.
struct SsmConvOp {
  Tensor x, weight, state, y;  // x, y: {C, T}; weight: {K, C}; state: {K-1, C, n_slots}
  const float* bias;           // C values, or nullptr
  uint32_t n_seqs;
  const uint32_t* seq_token_start;  // n_seqs + 1 offsets, non-decreasing, last = T
  const int32_t* state_slots;       // n_seqs distinct rows of state
  bool apply_silu;
};

struct SsmScanOp {
  Tensor u, dt, a, b, c, state, y;  // u, dt, y: {D, T}; a: {S, D}; b, c: {S, T}; state {S, D, n}
  const float* dt_bias;             // D values, or nullptr
  const float* d;                   // D values, or nullptr
  const float* z;                   // {D, T}, or nullptr
  uint32_t n_seqs;
  const uint32_t* seq_token_start;
  const int32_t* state_slots;
};

struct MoeGateOp {
  Tensor logits, ids, weights;  // logits {E, T}; ids (I32), weights {k, T}
  bool normalize;
  float scale;
  uint32_t gating = SY_MOE_GATING_SOFTMAX;  // 1.5: or SY_MOE_GATING_SIGMOID
  const float* selection_bias = nullptr;    // 1.5: E values, or nullptr
};

struct MoeMatmulOp {
  Tensor x, w, ids, y;  // x {K, 1 or k, T}; w {K, N, n_expert}; ids {k, T} in range; y {N, k, T}
  // 1.5: bytes from one expert's matrix to the next (always set: N * row_bytes(K) by default;
  // w.data + e * expert_stride is expert e), and the optional epilogue y = (W x + bias) * scale.
  uint64_t expert_stride = 0;
  const float* bias = nullptr;   // {N, n_expert}
  const float* scale = nullptr;  // {n_expert}
};

// The 1.5 ops, validated: see backend.h for the math.
struct SsmScan2Op {
  Tensor xbc, dt, a, state, y;  // xbc {D + 2GS, T}; dt {H, T}; a {H}; state {S, D, n}; y {D, T}
  const float* dt_bias;         // H values, or nullptr
  const float* d;               // H values, or nullptr
  const float* z;               // {D, T}, or nullptr
  int64_t n_head, n_group, d_state;
  uint32_t n_seqs;
  const uint32_t* seq_token_start;
  const int32_t* state_slots;
};

struct GatedDeltaNetOp {
  Tensor qkv, alpha, beta, state, y;  // qkv {(2Hk + Hv) S, T}; alpha, beta {Hv, T}; y {S, Hv, T}
  const float* dt_bias;               // Hv values
  const float* a;                     // Hv values
  int64_t head_dim, n_k_head, n_v_head;
  uint32_t head_map;  // sy_gdn_head_map
  float eps;
  uint32_t n_seqs;
  const uint32_t* seq_token_start;
  const int32_t* state_slots;
};

struct NormOp {
  Tensor x, y;     // {n, rows}; y may be x
  const float* w;  // {n, groups}, or nullptr
  int64_t groups;  // 1 when w is nullptr
  uint32_t kind;   // sy_norm_kind
  float eps;
};

struct UnaryOp {
  Tensor x, y;    // same shape; y may be x
  uint32_t kind;  // sy_unary_kind
};

// The 1.6 op, validated: see backend.h for the math.
struct SwigluOaiOp {
  Tensor g, u, y;  // same shape; y may be g or u
  float alpha, limit;
};

// The 1.3 model ops, validated: see backend.h for the math.
struct RopeExtOp {
  Tensor x;                   // {head_dim, n_head, n_tokens}, rotated in place
  const int32_t* pos;         // n_tokens positions
  const float* freq_factors;  // n_rot / 2 values, or nullptr (all 1)
  uint32_t mode, n_rot, n_ctx_orig;
  float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
};

struct BiasScaleOp {
  Tensor x, y;        // {n, rows}; y may be x
  const float* bias;  // n values, or nullptr
  float scale;
  bool bias_first;  // SY_BIAS_THEN_SCALE: (x + bias) * scale; else x * scale + bias
};

// A host-memory buffer: allocated (owned) or wrapping caller memory (zero copy).
struct Buffer {
  void* data;
  uint64_t size;
  bool owned;
  bool packed = false;  // a weight_pack result: only matmul's w may read it
};

struct PluginDesc;

// What a plugin implements. The shared layer has checked dtypes, shapes, buffer ranges,
// alignment and aliasing before any kernel runs; kernels may throw (bad_alloc, Error).
class Backend {
 public:
  virtual ~Backend();

  virtual void get_rows(const Tensor& table, const int32_t* ids, const Tensor& dst) = 0;
  virtual void matmul(const Tensor& x, const Tensor& w, const Tensor& y) = 0;
  virtual void rms_norm(const Tensor& x, const Tensor& w, float eps, const Tensor& y) = 0;
  virtual void rope(const Tensor& x, const int32_t* pos, uint32_t n_rot, float freq_base,
                    float freq_scale, uint32_t mode) = 0;
  virtual void add(const Tensor& a, const Tensor& b, const Tensor& y) = 0;
  virtual void swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) = 0;
  virtual void kv_store(const KvStoreOp& op) = 0;
  virtual void attention(const AttentionOp& op) = 0;
  // 1.1 hybrid ops: exported only when the PluginDesc sets hybrid_ops (NULL in the table
  // otherwise, so the host refuses hybrid models at load instead of failing mid-forward).
  virtual void ssm_conv(const SsmConvOp& op);
  virtual void ssm_scan(const SsmScanOp& op);
  virtual void moe_gate(const MoeGateOp& op);
  virtual void moe_matmul(const MoeMatmulOp& op);
  virtual void moe_combine(const Tensor& x, const Tensor& weights, const Tensor& y);
  // Optional (no model calls it): a backend without it sets op_bit(OpIndex::softmax) in
  // PluginDesc::omit_ops and the table leaves the slot NULL.
  virtual void softmax(const Tensor& x, const Tensor& y);
  // 1.3 model ops (always in the table; the defaults refuse, naming the op and the plugin).
  virtual void rope_ext(const RopeExtOp& op);
  virtual void bias_scale(const BiasScaleOp& op);
  // 1.5 ops: exported only when the PluginDesc sets hybrid2_ops (the plugin then speaks 1.5 and
  // honours the 1.5 members of AttentionOp, MoeGateOp and MoeMatmulOp too; without it, 1.4).
  virtual void ssm_scan2(const SsmScan2Op& op);
  virtual void gated_delta_net(const GatedDeltaNetOp& op);
  virtual void norm(const NormOp& op);
  // y = a * b; b is a's shape or {1, rows}: one value per row of a.
  virtual void mul(const Tensor& a, const Tensor& b, const Tensor& y);
  virtual void unary(const UnaryOp& op);
  // 1.6 op: exported only when the PluginDesc sets dense2_ops (with the GELU and TANH unary kinds
  // and attention sinks and soft-capping; the plugin then speaks 1.6, without it at most 1.5).
  virtual void swiglu_oai(const SwigluOaiOp& op);
  // 1.4 weight_pack: the bytes of w in a layout of this backend's own, or 0 when it has none for
  // w (the default: weight_pack then returns no buffer); pack_weight writes them to dst (64-byte
  // aligned). matmul then receives such a w with Tensor::packed set.
  virtual uint64_t packed_size(const Tensor& w);
  virtual void pack_weight(const Tensor& w, void* dst);
  // Completes what earlier ops deferred: a backend may queue matmuls (the ABI promises results
  // only after synchronize) and run them together. The shared layer calls it before every other
  // op, buffer access, synchronize and buffer_free, so queued matmuls never outlive their inputs
  // and their outputs are written before anything reads them. Default: nothing is deferred.
  virtual void flush() {}

  // Owned by the shared layer.
  const PluginDesc* desc = nullptr;
  std::string last_error;
  std::unordered_set<Buffer*> buffers;  // every live buffer of this backend
};

// Every op of Backend declared as an override, for a backend class that implements them all
// (each in-tree backend): a new op adds its line here, beside its virtual above.
#define SY_BACKEND_OP_OVERRIDES                                                                 \
  void get_rows(const ::sy::plugin::Tensor& table, const int32_t* ids,                          \
                const ::sy::plugin::Tensor& dst) override;                                      \
  void matmul(const ::sy::plugin::Tensor& x, const ::sy::plugin::Tensor& w,                     \
              const ::sy::plugin::Tensor& y) override;                                          \
  void rms_norm(const ::sy::plugin::Tensor& x, const ::sy::plugin::Tensor& w, float eps,        \
                const ::sy::plugin::Tensor& y) override;                                        \
  void rope(const ::sy::plugin::Tensor& x, const int32_t* pos, uint32_t n_rot, float freq_base, \
            float freq_scale, uint32_t mode) override;                                          \
  void add(const ::sy::plugin::Tensor& a, const ::sy::plugin::Tensor& b,                        \
           const ::sy::plugin::Tensor& y) override;                                             \
  void swiglu(const ::sy::plugin::Tensor& gate, const ::sy::plugin::Tensor& up,                 \
              const ::sy::plugin::Tensor& y) override;                                          \
  void softmax(const ::sy::plugin::Tensor& x, const ::sy::plugin::Tensor& y) override;          \
  void kv_store(const ::sy::plugin::KvStoreOp& op) override;                                    \
  void attention(const ::sy::plugin::AttentionOp& op) override;                                 \
  void ssm_conv(const ::sy::plugin::SsmConvOp& op) override;                                    \
  void ssm_scan(const ::sy::plugin::SsmScanOp& op) override;                                    \
  void moe_gate(const ::sy::plugin::MoeGateOp& op) override;                                    \
  void moe_matmul(const ::sy::plugin::MoeMatmulOp& op) override;                                \
  void moe_combine(const ::sy::plugin::Tensor& x, const ::sy::plugin::Tensor& weights,          \
                   const ::sy::plugin::Tensor& y) override;                                     \
  void rope_ext(const ::sy::plugin::RopeExtOp& op) override;                                    \
  void bias_scale(const ::sy::plugin::BiasScaleOp& op) override

// The 1.5 ops' overrides, for a backend that sets PluginDesc::hybrid2_ops.
#define SY_BACKEND_OP_OVERRIDES_1_5                                       \
  void ssm_scan2(const ::sy::plugin::SsmScan2Op& op) override;            \
  void gated_delta_net(const ::sy::plugin::GatedDeltaNetOp& op) override; \
  void norm(const ::sy::plugin::NormOp& op) override;                     \
  void mul(const ::sy::plugin::Tensor& a, const ::sy::plugin::Tensor& b,  \
           const ::sy::plugin::Tensor& y) override;                       \
  void unary(const ::sy::plugin::UnaryOp& op) override

// The 1.6 op's override, for a backend that sets PluginDesc::dense2_ops.
#define SY_BACKEND_OP_OVERRIDES_1_6 void swiglu_oai(const ::sy::plugin::SwigluOaiOp& op) override

using Params = std::vector<std::pair<std::string, std::string>>;

// Runs f(backend) for a call on handle `h` so that no exception crosses the C boundary: a NULL
// handle is refused, and every failure leaves its message in the handle's last_error (in the
// create error, last_error(NULL), for a NULL handle). `B` is the plugin's Backend subclass when
// f wants it (every handle a plugin creates is one).
template <class B = Backend, class F>
sy_status guarded(sy_backend_t h, const char* op, F&& f) noexcept {
  Backend* be = reinterpret_cast<Backend*>(h);
  return guard(
      op,
      [&] {
        if (!be) throw Error(SY_ERR_INVALID_ARG, std::string(op) + ": backend is NULL");
        f(static_cast<B&>(*be));
      },
      [be](const char* message) {
        if (be)
          set_error(be->last_error, message);
        else
          set_create_error(message);
      });
}

// The buffer guards of every backend's memory entries: throw Error naming the op.
Buffer* live_buffer(Backend& be, const char* op, sy_buffer_t handle);
void check_range(const char* op, const Buffer& b, uint64_t offset, uint64_t size);
// The guards of buffer_write and buffer_read: the live buffer `handle`, a host pointer (named
// `host_name`: "src", "dst") that is not NULL when size > 0, and the range inside the buffer.
Buffer* transfer_buffer(Backend& be, const char* op, sy_buffer_t handle, const void* host,
                        const char* host_name, uint64_t offset, uint64_t size);
// Copies `d` into the caller's sy_device_info, only what its struct_size covers (which stays).
void copy_device_info(const sy_device_info& d, sy_device_info* out);

// Value of `key`, or nullptr when absent (the last occurrence wins).
const std::string* find_param(const Params& params, const char* key);
// Parses `key` as an integer in [min, max]; `fallback` when absent; Error otherwise.
int int_param(const Params& params, const char* key, int fallback, int min, int max);
// int_param with min = 1.
int positive_int_param(const Params& params, const char* key, int fallback, int max);

struct PluginDesc {
  const char* name;  // also the device_info name prefix and the log tag
  const char* version;
  const char* description;
  uint64_t capabilities;            // SY_CAP_*
  uint64_t weight_dtypes;           // bit (1 << sy_dtype) per accepted weight dtype
  const char* const* known_params;  // NULL-terminated; others are logged and ignored
  std::unique_ptr<Backend> (*make)(const Params& params);  // throws Error on failure
  bool hybrid_ops = false;  // implements ssm_conv, ssm_scan, moe_gate, moe_matmul, moe_combine
  // Tensor data are device addresses (a GPU backend): validation never reads through them.
  bool device_memory = false;
  // Called by every entry before it succeeds: nullptr, or why this process cannot use the plugin
  // (the entry then fails with SY_ERR_UNAVAILABLE and the message). May be NULL.
  const char* (*load_check)() = nullptr;
  // Bit (1 << sy_dtype) per KV cache dtype kv_store and attention accept (device_info's
  // kv_dtypes); F32 is always accepted.
  uint64_t kv_dtypes = 1ull << SY_DTYPE_F32;
  // Bits (sy::op_bit) of optional ops the plugin does not implement (softmax): NULL in its table.
  // Last: plugins initialise the members above positionally.
  uint64_t omit_ops = 0;
  // Implements the 1.5 ops (ssm_scan2, gated_delta_net, norm, mul, unary) and the 1.5 members of
  // attention (window), moe_gate (sigmoid, selection bias) and moe_matmul (stride, bias, scale).
  // Without it the 1.5 slots are NULL and the plugin negotiates at most ABI 1.4.
  bool hybrid2_ops = false;
  // Implements the 1.6 ops: the unary kinds GELU and TANH (Gemma's GEGLU and soft-capping),
  // attention sinks and swiglu_oai (gpt-oss), attention logit soft-capping (Gemma 2). Without it
  // the swiglu_oai slot is NULL, unary refuses the new kinds, attention the sinks and the cap, and
  // the plugin negotiates at most ABI 1.5.
  bool dense2_ops = false;
};

// The shared implementations behind a plugin's C symbols (see SY_DEFINE_BACKEND_PLUGIN).
sy_status create_backend(const PluginDesc& desc, const sy_param* params, size_t n_params,
                         sy_backend_t* out);
// The table: the SDK's thunks for every op of SY_BACKEND_OPS except those omitted_ops(desc) names.
sy_backend_iface make_backend_iface(sy_status (*create)(const sy_param*, size_t, sy_backend_t*),
                                    const PluginDesc& desc);
// Bits (op_bit) of the ops the table leaves NULL: desc.omit_ops, the hybrid ops without
// desc.hybrid_ops and the 1.5 ops without desc.hybrid2_ops.
uint64_t omitted_ops(const PluginDesc& desc);
sy_status plugin_entry(const PluginDesc& desc, const sy_backend_iface* iface,
                       uint32_t host_abi_version, const sy_host_api* host, sy_plugin_info* info);

}  // namespace sy::plugin

// Defines the plugin's exported entry for `desc` (a PluginDesc with static storage). The create
// thunk exists because sy_backend_iface::create carries no context pointer.
#define SY_DEFINE_BACKEND_PLUGIN(desc)                                                            \
  static sy_status sy_plugin_create_thunk(const sy_param* params, size_t n_params,                \
                                          sy_backend_t* out) {                                    \
    return ::sy::plugin::create_backend(desc, params, n_params, out);                             \
  }                                                                                               \
  extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version,                       \
                                                 const sy_host_api* host, sy_plugin_info* info) { \
    static const sy_backend_iface iface =                                                         \
        ::sy::plugin::make_backend_iface(&sy_plugin_create_thunk, (desc));                        \
    return ::sy::plugin::plugin_entry(desc, &iface, host_abi_version, host, info);                \
  }
