// Every op of sy_backend_iface in one list, in table order. The list drives the SDK's ABI thunks
// and table (sdk/backend/backend_iface.cpp), the GPU plugin's device gates, the host's op
// wrappers and its missing-op check (host/backend.h): adding an op is its ABI slot, one line
// here, its argument check (sdk/backend/op_checks.cpp), its Backend virtual and its kernels.
//
//   X(name, group, (parameters after the backend handle), (their names))
//
// group says when the host requires the op: kRequired always; kOptional never (no model calls
// it; a backend may leave it NULL); the others when the model has SSM layers, MoE layers, RoPE
// frequency factors or YaRN, projection biases and scales, Mamba-2 layers, gated delta nets,
// grouped or weightless norms, element-wise products or the unary activations.
#pragma once

#include "switchyard/abi/backend.h"

#define SY_BACKEND_OPS(X)                                                                         \
  X(get_rows, kRequired,                                                                          \
    (const sy_tensor* table, const int32_t* ids, uint32_t n, const sy_tensor* dst),               \
    (table, ids, n, dst))                                                                         \
  X(matmul, kRequired, (const sy_tensor* x, const sy_tensor* w, const sy_tensor* y), (x, w, y))   \
  X(rms_norm, kRequired, (const sy_tensor* x, const sy_tensor* w, float eps, const sy_tensor* y), \
    (x, w, eps, y))                                                                               \
  X(rope, kRequired,                                                                              \
    (const sy_tensor* x, const int32_t* pos, uint32_t n_rot, float freq_base, float freq_scale,   \
     uint32_t mode),                                                                              \
    (x, pos, n_rot, freq_base, freq_scale, mode))                                                 \
  X(add, kRequired, (const sy_tensor* a, const sy_tensor* b, const sy_tensor* y), (a, b, y))      \
  X(swiglu, kRequired, (const sy_tensor* gate, const sy_tensor* up, const sy_tensor* y),          \
    (gate, up, y))                                                                                \
  X(softmax, kOptional, (const sy_tensor* x, const sy_tensor* y), (x, y))                         \
  X(kv_store, kRequired, (const sy_kv_store_args* args), (args))                                  \
  X(attention, kRequired, (const sy_attention_args* args), (args))                                \
  X(ssm_conv, kSsm, (const sy_ssm_conv_args* args), (args))                                       \
  X(ssm_scan, kSsm, (const sy_ssm_scan_args* args), (args))                                       \
  X(moe_gate, kMoe, (const sy_moe_gate_args* args), (args))                                       \
  X(moe_matmul, kMoe, (const sy_moe_matmul_args* args), (args))                                   \
  X(moe_combine, kMoe, (const sy_tensor* x, const sy_tensor* weights, const sy_tensor* y),        \
    (x, weights, y))                                                                              \
  X(rope_ext, kRopeExt, (const sy_rope_ext_args* args), (args))                                   \
  X(bias_scale, kBiasScale, (const sy_bias_scale_args* args), (args))                             \
  X(weight_pack, kOptional, (const sy_tensor* w, sy_buffer_t* out), (w, out))                     \
  X(ssm_scan2, kSsm2, (const sy_ssm_scan2_args* args), (args))                                    \
  X(gated_delta_net, kGatedDeltaNet, (const sy_gated_delta_net_args* args), (args))               \
  X(norm, kNorm, (const sy_norm_args* args), (args))                                              \
  X(mul, kMul, (const sy_tensor* a, const sy_tensor* b, const sy_tensor* y), (a, b, y))           \
  X(unary, kUnary, (const sy_unary_args* args), (args))                                           \
  X(swiglu_oai, kSwigluOai, (const sy_swiglu_oai_args* args), (args))

// The memory and sync entries every backend must have besides the required ops.
#define SY_BACKEND_REQUIRED_ENTRIES(X) X(buffer_write) X(buffer_read) X(synchronize)

#define SY_BACKEND_OP_LAST swiglu_oai  // the table's last member (a static_assert checks it)

namespace sy {

enum class OpGroup {
  kRequired,
  kOptional,
  kSsm,
  kMoe,
  kRopeExt,
  kBiasScale,
  kSsm2,
  kGatedDeltaNet,
  kNorm,
  kMul,
  kUnary,
  kSwigluOai
};

// What a model needs beyond the required ops: op groups, and the 1.5 members of older ops
// (sliding windows, sigmoid routing with a selection bias, per-expert bias / scale / stride),
// which only a plugin that negotiated 1.5 honours.
struct OpNeeds {
  bool ssm = false, moe = false, rope_ext = false, bias_scale = false;
  bool ssm2 = false, gated_delta_net = false, norm = false, mul = false, unary = false;
  bool attention_window = false, moe_routing_1_5 = false, moe_experts_1_5 = false;
  bool unary_1_6 = false;        // the 1.6 unary kinds (GELU, TANH)
  bool attention_sinks = false;  // the 1.6 member sy_attention_args.sinks
  bool attention_softcap = false;  // the 1.6 member sy_attention_args.softcap
  bool swiglu_oai = false;
  bool wants(OpGroup g) const {
    switch (g) {
      case OpGroup::kRequired:
        return true;
      case OpGroup::kOptional:
        return false;
      case OpGroup::kSsm:
        return ssm;
      case OpGroup::kMoe:
        return moe;
      case OpGroup::kRopeExt:
        return rope_ext;
      case OpGroup::kBiasScale:
        return bias_scale;
      case OpGroup::kSsm2:
        return ssm2;
      case OpGroup::kGatedDeltaNet:
        return gated_delta_net;
      case OpGroup::kNorm:
        return norm;
      case OpGroup::kMul:
        return mul;
      case OpGroup::kUnary:
        return unary;
      case OpGroup::kSwigluOai:
        return swiglu_oai;
    }
    return true;
  }
};

// The op's position in the list: bit (1 << op_index) in PluginDesc::omit_ops.
enum class OpIndex {
#define SY_OP_INDEX(name, group, params, args) name,
  SY_BACKEND_OPS(SY_OP_INDEX)
#undef SY_OP_INDEX
      count
};
constexpr uint64_t op_bit(OpIndex op) {
  return 1ull << static_cast<unsigned>(op);
}

}  // namespace sy
