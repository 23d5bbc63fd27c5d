// Argument validation for every backend op: turns the raw ABI arguments into validated Tensors
// or throws Error with a deterministic message that names the op and the numbers.
#pragma once

#include "switchyard/sdk/backend.h"

namespace sy::plugin::checks {

struct GetRowsArgs {
  Tensor table, dst;
};
struct MatmulArgs {
  Tensor x, w, y;
};
struct RmsNormArgs {
  Tensor x, w, y;
};
struct BinaryArgs {  // add (a, b) and swiglu (gate, up)
  Tensor a, b, y;
};
struct UnaryArgs {
  Tensor x, y;
};

GetRowsArgs get_rows(const Backend& be, const sy_tensor* table, const int32_t* ids, uint32_t n,
                     const sy_tensor* dst);
MatmulArgs matmul(const Backend& be, const sy_tensor* x, const sy_tensor* w, const sy_tensor* y);
// A weight (at most 2-D, not itself packed) and a non-NULL out, which it sets to NULL.
Tensor weight_pack(const Backend& be, const sy_tensor* w, sy_buffer_t* out);
RmsNormArgs rms_norm(const Backend& be, const sy_tensor* x, const sy_tensor* w, float eps,
                     const sy_tensor* y);
Tensor rope(const Backend& be, const sy_tensor* x, const int32_t* pos, uint32_t n_rot,
            float freq_base, float freq_scale, uint32_t mode);
BinaryArgs add(const Backend& be, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y);
BinaryArgs swiglu(const Backend& be, const sy_tensor* gate, const sy_tensor* up,
                  const sy_tensor* y);
UnaryArgs softmax(const Backend& be, const sy_tensor* x, const sy_tensor* y);
KvStoreOp kv_store(const Backend& be, const sy_kv_store_args* args);
AttentionOp attention(const Backend& be, const sy_attention_args* args);
SsmConvOp ssm_conv(const Backend& be, const sy_ssm_conv_args* args);
SsmScanOp ssm_scan(const Backend& be, const sy_ssm_scan_args* args);
MoeGateOp moe_gate(const Backend& be, const sy_moe_gate_args* args);
MoeMatmulOp moe_matmul(const Backend& be, const sy_moe_matmul_args* args);
BinaryArgs moe_combine(const Backend& be, const sy_tensor* x, const sy_tensor* weights,
                       const sy_tensor* y);  // a = x, b = weights

RopeExtOp rope_ext(const Backend& be, const sy_rope_ext_args* args);
SsmScan2Op ssm_scan2(const Backend& be, const sy_ssm_scan2_args* args);
GatedDeltaNetOp gated_delta_net(const Backend& be, const sy_gated_delta_net_args* args);
NormOp norm(const Backend& be, const sy_norm_args* args);
BinaryArgs mul(const Backend& be, const sy_tensor* a, const sy_tensor* b, const sy_tensor* y);
UnaryOp unary(const Backend& be, const sy_unary_args* args);
SwigluOaiOp swiglu_oai(const Backend& be, const sy_swiglu_oai_args* args);
BiasScaleOp bias_scale(const Backend& be, const sy_bias_scale_args* args);

// Bytes a validated tensor covers.
int64_t nbytes(const Tensor& t);

}  // namespace sy::plugin::checks
