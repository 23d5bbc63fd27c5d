// LFM2's gated short convolution (llama.cpp's build_shortconv_block): in_proj into B, C and x
// (row views), B * x through a depthwise causal conv of l_cache taps (no bias, no activation),
// C times that, then out_proj. Its state is the conv's last l_cache - 1 inputs.
#pragma once

#include <cstdint>

#include "model/layer_pass.h"
#include "model/tensor_table.h"

namespace sy::model {

struct ShortConvWeights {
  Linear in_b, in_c, in_x;  // row blocks of shortconv.in_proj
  const sy_tensor* conv_w = nullptr;
  Linear out;
  uint32_t state_layer = 0;
};

void shortconv_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, ShortConvWeights& w);
uint64_t shortconv_scratch(const ModelDesc& d);
void shortconv(LayerPass& p, const ShortConvWeights& w, const sy_tensor& xn, const sy_tensor& out);

}  // namespace sy::model
