// Default bodies of the optional ops (softmax, the 1.1 hybrid ops, the 1.3 model ops, the 1.5 ops)
// for backends that do not implement them. The table leaves the hybrid slots NULL unless
// PluginDesc::hybrid_ops is set (softmax's when omit_ops says so), so they only run when a plugin
// exports an op without overriding it: a clear error instead of a crash.
#include "switchyard/sdk/backend.h"

namespace sy::plugin {
namespace {

[[noreturn]] void unsupported(const Backend& be, const char* op) {
  throw Error(SY_ERR_UNSUPPORTED, std::string(op) + ": not implemented by " +
                                      (be.desc ? be.desc->name : "this backend"));
}

}  // namespace

void Backend::ssm_conv(const SsmConvOp&) {
  unsupported(*this, "ssm_conv");
}
void Backend::ssm_scan(const SsmScanOp&) {
  unsupported(*this, "ssm_scan");
}
void Backend::moe_gate(const MoeGateOp&) {
  unsupported(*this, "moe_gate");
}
void Backend::moe_matmul(const MoeMatmulOp&) {
  unsupported(*this, "moe_matmul");
}
void Backend::moe_combine(const Tensor&, const Tensor&, const Tensor&) {
  unsupported(*this, "moe_combine");
}
void Backend::softmax(const Tensor&, const Tensor&) {
  unsupported(*this, "softmax");
}
void Backend::rope_ext(const RopeExtOp&) {
  unsupported(*this, "rope_ext");
}
void Backend::bias_scale(const BiasScaleOp&) {
  unsupported(*this, "bias_scale");
}
void Backend::ssm_scan2(const SsmScan2Op&) {
  unsupported(*this, "ssm_scan2");
}
void Backend::gated_delta_net(const GatedDeltaNetOp&) {
  unsupported(*this, "gated_delta_net");
}
void Backend::norm(const NormOp&) {
  unsupported(*this, "norm");
}
void Backend::mul(const Tensor&, const Tensor&, const Tensor&) {
  unsupported(*this, "mul");
}
void Backend::unary(const UnaryOp&) {
  unsupported(*this, "unary");
}
void Backend::swiglu_oai(const SwigluOaiOp&) {
  unsupported(*this, "swiglu_oai");
}
uint64_t Backend::packed_size(const Tensor&) {
  return 0;
}
void Backend::pack_weight(const Tensor&, void*) {
  unsupported(*this, "weight_pack");
}

}  // namespace sy::plugin
