// The decoder's tensor table: binds a file's tensors to the layer pattern with llama.cpp's names
// and shapes (its load_arch_tensors for llama, mamba and jamba plus the generic `.scale` /
// `.input_scale` pass), taking the optional tensors the arch's rules allow, and refuses the file
// when a tensor is left over.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/backend.h"
#include "model/arch.h"
#include "model/decoder_hparams.h"
#include "model/moe_ffn.h"
#include "model/weight_map.h"

namespace sy::model {

// A projection y = W x with llama.cpp's optional epilogue: a bias and a per-tensor output scale,
// applied in the order its graph applies them.
struct Linear {
  sy_tensor w{};
  sy_tensor bias{};  // valid when has_bias
  bool has_bias = false;
  float scale = 1.0f;
  bool bias_first = false;  // (W x + b) * s (the FFN) instead of (W x) * s + b
  bool has_epilogue() const { return has_bias || scale != 1.0f; }
};

struct AttentionWeights {
  Linear q, k, v, o;
  uint32_t cache_layer = 0;  // ordinal among attention layers: the KV cache layer
};

struct SsmWeights {
  Linear in_x, in_z;               // the two halves of ssm_in
  sy_tensor x_dt{}, x_b{}, x_c{};  // the three row blocks of ssm_x
  const sy_tensor *conv_w = nullptr, *conv_b = nullptr;
  const sy_tensor *dt_norm = nullptr, *b_norm = nullptr, *c_norm = nullptr;  // null: none
  const sy_tensor *dt_w = nullptr, *dt_b = nullptr, *a = nullptr, *d = nullptr;
  Linear out;
  uint32_t state_layer = 0;  // ordinal among recurrent layers: the state cache layer
};

struct FfnWeights {
  Linear gate, up, down;   // dense
  MoeWeights exps{};       // MoE
  uint32_t moe_index = 0;  // ordinal among MoE layers
};

struct LayerWeights {
  LayerSpec spec;
  const sy_tensor* attn_norm = nullptr;
  AttentionWeights attn;
  SsmWeights ssm;
  const sy_tensor* ffn_norm = nullptr;
  FfnWeights ffn;
};

struct DecoderWeights {
  const sy_tensor* tok_embd = nullptr;
  const sy_tensor* out_norm = nullptr;
  const sy_tensor* output = nullptr;
  const sy_tensor* rope_freqs = nullptr;  // F32 {n_rot / 2}, or null
  std::vector<LayerWeights> layers;
  bool needs_norm_ones = false;  // dt/B/C norms without weights (mamba's ssm.dt_b_c_rms)
  // Taken as llama.cpp's loader takes them, but not applied, as its graph does not apply them.
  std::vector<std::string> accepted_unapplied;
  bool any_epilogue() const;
};

// Binds every tensor the pattern needs; throws naming the file and the tensor when one is
// missing, of the wrong shape or dtype, or when the file has a tensor the table does not take.
DecoderWeights bind_weights(WeightMap& weights, const gguf::File& file, const ArchSpec& arch,
                            const DecoderHParams& hp);

}  // namespace sy::model
