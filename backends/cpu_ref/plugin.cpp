// Entry point of the cpu_ref plugin.
#include "ref_backend.h"
#include "switchyard/common/dtype.h"
#include "switchyard/sdk/backend.h"

namespace {

std::unique_ptr<sy::plugin::Backend> make(const sy::plugin::Params&) {
  return std::make_unique<sy::cpu_ref::RefBackend>();
}

const char* const kKnownParams[] = {nullptr};

SY_PLUGIN_NOTE(SY_PLUGIN_BACKEND, "cpu_ref", "0.1.0", SY_CAP_ZERO_COPY_HOST,
               "Reference CPU backend: scalar C++ with double accumulators, the ground truth for "
               "tests");

const sy::plugin::PluginDesc kDesc = {
    sy_plugin_note_.name,
    sy_plugin_note_.version,
    sy_plugin_note_.description,
    sy_plugin_note_.capabilities_lo,
    sy::dtype::weight_mask(),  // every type of the dtype table: rows are dequantised to F32
    kKnownParams,
    &make,
    /*hybrid_ops=*/true,
    /*device_memory=*/false,
    /*load_check=*/nullptr,
    /*kv_dtypes=*/(1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16),
    /*omit_ops=*/0,
    /*hybrid2_ops=*/true,
    /*dense2_ops=*/true,
};

}  // namespace

SY_DEFINE_BACKEND_PLUGIN(kDesc)
