// Mamba-2's mixer (llama.cpp's build_mamba2_layer): in_proj into z, xBC and dt (row views of
// ssm_in), the causal conv over xBC with bias and SiLU, the scan with one decay per head, B and C
// per group, the D skip and the z gate (gate before the norm), the grouped RMS norm when the
// family has ssm_norm, then out_proj.
#pragma once

#include <cstdint>

#include "model/layer_pass.h"
#include "model/tensor_table.h"

namespace sy::model {

struct Mamba2Weights {
  Linear in_z, in_xbc, in_dt;  // row blocks of ssm_in
  const sy_tensor *conv_w = nullptr, *conv_b = nullptr;
  const sy_tensor *dt_b = nullptr, *a = nullptr, *d = nullptr;
  const sy_tensor* norm = nullptr;  // {d_inner / n_group, n_group}, or null (Falcon-H1 may lack it)
  Linear out;
  uint32_t state_layer = 0;
};

struct Mamba2Rules {
  bool scale = false;  // ssm_in / ssm_out `.scale` multiply
  Need norm = Need::required;
};

void mamba2_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const Mamba2Rules& r,
                    Mamba2Weights& w);
uint64_t mamba2_scratch(const ModelDesc& d);
void mamba2(LayerPass& p, const Mamba2Weights& w, const sy_tensor& xn, const sy_tensor& out);

}  // namespace sy::model
