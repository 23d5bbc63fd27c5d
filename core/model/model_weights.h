// A model's weights as its architecture's tensor table bound them (model/arch/): the global
// tensors and, per layer, the weights of whichever blocks the layer has.
#pragma once

#include <string>
#include <vector>

#include "model/blocks/attention.h"
#include "model/blocks/ffn.h"
#include "model/blocks/gdn.h"
#include "model/blocks/mamba.h"
#include "model/blocks/mamba2.h"
#include "model/blocks/moe.h"
#include "model/blocks/shortconv.h"
#include "model/model_desc.h"

namespace sy::model {

struct LayerWeights {
  LayerSpec spec;
  const sy_tensor* attn_norm = nullptr;  // the mixer's pre-norm
  AttentionWeights attn;
  MambaWeights ssm;
  Mamba2Weights ssm2;
  GdnWeights gdn;
  ShortConvWeights conv;
  const sy_tensor* ffn_norm = nullptr;  // the FFN's pre-norm (post_attention_norm in Qwen3.5)
  // Gemma's norms of the mixer's and the FFN's outputs before the residual add, or null.
  const sy_tensor* attn_post_norm = nullptr;
  const sy_tensor* ffn_post_norm = nullptr;
  const sy_tensor* out_scale = nullptr;  // F32 {1}: Gemma 4's scale of the layer's output, or null
  // Gemma 4's MoE layers: the experts' pre-norm, and the dense FFN's and the experts' output
  // norms before their sum (ffn_post_norm then norms the sum).
  const sy_tensor* moe_norm = nullptr;
  const sy_tensor* ffn_post_norm_dense = nullptr;
  const sy_tensor* moe_post_norm = nullptr;
  // Gemma 4 E2B/E4B's per-layer input: the stream's gate {n_embd, P}, projection {P, n_embd} and
  // its norm, or absent.
  Linear ple_gate, ple_proj;
  const sy_tensor* ple_post_norm = nullptr;
  FfnWeights ffn;
  MoeWeights moe;
};

struct ModelWeights {
  const sy_tensor* tok_embd = nullptr;
  const sy_tensor* out_norm = nullptr;
  sy_tensor output{};                     // the head: its own matrix, or tok_embd when tied
  const sy_tensor* output_bias = nullptr;  // F32 {n_vocab} (Qwen2), or null
  const sy_tensor* rope_freqs = nullptr;  // F32 {n_rot / 2}, or null
  // Gemma 4 E2B/E4B: per-layer token embeddings {P * n_layer, n_vocab}, the projection of the
  // stream to them {n_embd, P * n_layer} and its norm {P}, or absent.
  const sy_tensor* per_layer_tok_embd = nullptr;
  sy_tensor per_layer_model_proj{};
  const sy_tensor* per_layer_proj_norm = nullptr;
  std::vector<LayerWeights> layers;
  // Taken as llama.cpp's loader takes them, but not applied, as its graph does not apply them.
  std::vector<std::string> accepted_unapplied;
  bool any_epilogue() const;
};

}  // namespace sy::model
