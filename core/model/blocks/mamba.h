// Mamba-1's mixer (llama.cpp's build_mamba_layer): in_proj into x and z, the causal conv with
// bias and SiLU, the dt/B/C projection (optionally RMS-normed: Jamba, FalconMamba), dt_proj,
// the selective scan with its D skip and z gate, then out_proj.
#pragma once

#include <cstdint>

#include "model/layer_pass.h"
#include "model/tensor_table.h"

namespace sy::model {

struct MambaWeights {
  Linear in_x, in_z;               // the two halves of ssm_in
  sy_tensor x_dt{}, x_b{}, x_c{};  // the three row blocks of ssm_x
  const sy_tensor *conv_w = nullptr, *conv_b = nullptr;
  const sy_tensor *dt_norm = nullptr, *b_norm = nullptr, *c_norm = nullptr;  // null: none
  const sy_tensor *dt_w = nullptr, *dt_b = nullptr, *a = nullptr, *d = nullptr;
  Linear out;
  uint32_t state_layer = 0;  // ordinal among recurrent layers: the state cache layer
};

// `norms`: the ssm_{dt,b,c}_norm tensors are required (jamba); `scale`: ssm_in/out .scale apply.
void mamba_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, bool norms, bool scale,
                   MambaWeights& w);
uint64_t mamba_scratch(const ModelDesc& d);
void mamba(LayerPass& p, const MambaWeights& w, const sy_tensor& xn, const sy_tensor& out);

}  // namespace sy::model
