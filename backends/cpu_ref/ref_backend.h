// The reference backend: obviously-correct scalar loops with double accumulators. Slow on
// purpose; every kernel reads like the formula in backend.h.
#pragma once

#include "switchyard/sdk/backend.h"

namespace sy::cpu_ref {

using plugin::AttentionOp;
using plugin::KvStoreOp;
using plugin::Tensor;

class RefBackend final : public plugin::Backend {
 public:
  void get_rows(const Tensor& table, const int32_t* ids, const Tensor& dst) override;
  void matmul(const Tensor& x, const Tensor& w, const Tensor& y) override;
  void rms_norm(const Tensor& x, const Tensor& w, float eps, const Tensor& y) override;
  void rope(const Tensor& x, const int32_t* pos, uint32_t n_rot, float freq_base, float freq_scale,
            uint32_t mode) override;
  void add(const Tensor& a, const Tensor& b, const Tensor& y) override;
  void swiglu(const Tensor& gate, const Tensor& up, const Tensor& y) override;
  void softmax(const Tensor& x, const Tensor& y) override;
  void kv_store(const KvStoreOp& op) override;
  void attention(const AttentionOp& op) override;
  void ssm_conv(const plugin::SsmConvOp& op) override;
  void ssm_scan(const plugin::SsmScanOp& op) override;
  void moe_gate(const plugin::MoeGateOp& op) override;
  void moe_matmul(const plugin::MoeMatmulOp& op) override;
  void moe_combine(const Tensor& x, const Tensor& weights, const Tensor& y) override;
  void rope_ext(const plugin::RopeExtOp& op) override;
  void bias_scale(const plugin::BiasScaleOp& op) override;
};

}  // namespace sy::cpu_ref
