// Entry point of the cpu_ref plugin.
#include "backend_plugin_util.h"
#include "ref_backend.h"

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
    (1ull << SY_DTYPE_F32) | (1ull << SY_DTYPE_F16) | (1ull << SY_DTYPE_BF16) |
        (1ull << SY_DTYPE_Q8_0),
    kKnownParams,
    &make,
    /*hybrid_ops=*/true,
};

}  // namespace

SY_DEFINE_BACKEND_PLUGIN(kDesc)
