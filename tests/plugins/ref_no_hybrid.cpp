// cpu_ref's kernels behind a table without the 1.1 hybrid ops (PluginDesc::hybrid_ops false):
// the backend a hybrid model must refuse at load, naming the ops.
#include "ref_backend.h"
#include "switchyard/sdk/backend.h"

namespace {

std::unique_ptr<sy::plugin::Backend> make(const sy::plugin::Params&) {
  return std::make_unique<sy::cpu_ref::RefBackend>();
}

const char* const kKnownParams[] = {nullptr};

const sy::plugin::PluginDesc kDesc = {
    "ref_no_hybrid",
    "0.1.0",
    "test: cpu_ref without ssm_conv, ssm_scan and the MoE ops",
    SY_CAP_ZERO_COPY_HOST,
    (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16),
    kKnownParams,
    &make,
    /*hybrid_ops=*/false,
};

}  // namespace

SY_DEFINE_BACKEND_PLUGIN(kDesc)
