// Vendor BLAS for the F32 GEMMs, loaded at run time (dlopen) so the plugin has no load-time
// dependency on it: cuBLAS in the CUDA build; Debian 12 packages no hipBLAS/rocBLAS, so the HIP
// build uses the built-in tiled kernel.
#pragma once

#include <memory>
#include <string>

#include "vendor.h"

namespace sy::gpu {

class Blas {
 public:
  // nullptr, with the reason in *why, when this build or machine has no usable BLAS.
  static std::unique_ptr<Blas> load(cudaStream_t stream, std::string* why);
  virtual ~Blas() = default;
  virtual const std::string& name() const = 0;
  // y (row stride ldy) gets m rows of n values: y[r][j] = sum_k x[r][k] * w[j][k].
  virtual void gemm_nt(const float* x, const float* w, float* y, int m, int n, int k, int ldy) = 0;
};

}  // namespace sy::gpu
