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
  SY_BACKEND_OP_OVERRIDES;
  SY_BACKEND_OP_OVERRIDES_1_5;
  SY_BACKEND_OP_OVERRIDES_1_6;
};

}  // namespace sy::cpu_ref
