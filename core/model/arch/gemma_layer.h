// The layer Gemma 2 and Gemma 3 share (llama.cpp's gemma2.cpp and gemma3.cpp load the same
// tensors but Gemma 3's q/k norms): pre and post norms around attention and the GELU-gated FFN.
#pragma once

#include "model/arch/arch.h"

namespace sy::model {

void gemma_layer_tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w, bool qk_norm);

}  // namespace sy::model
