// Weights of the quantised types the fused kernels (fused_dot.h) do not decode: Q4_0 ... IQ4_XS
// except Q8_0. A correct path for now: rows are dequantised with the dtype table's codecs, panel
// by panel, and multiplied by the F32 GEMM; integer-dot kernels for these types come later.
#pragma once

#include <cstdint>
#include <vector>

#include "backend_plugin_util.h"
#include "gemm_cache.h"

namespace sy::cpu_onednn {

// True for a weight dtype that takes this path (F32, F16, BF16 and Q8_0 have their own).
bool dequantised_path(uint32_t dtype);

// y = x W^T for W's rows dequantised into scratch a panel at a time.
void dequantised_matmul(GemmCache& gemm, std::vector<float>& scratch, const plugin::Tensor& x,
                        const plugin::Tensor& w, const plugin::Tensor& y, int threads);

// dst row i = table row ids[i], dequantised.
void dequantised_get_rows(const plugin::Tensor& table, const int32_t* ids,
                          const plugin::Tensor& dst, int threads);

}  // namespace sy::cpu_onednn
