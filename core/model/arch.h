// What makes llama, mamba and jamba different for the decoder, as llama.cpp's arch tables do: how
// the layer pattern and sizes come from the file's keys, and which of the optional tensors
// llama.cpp's loader creates for the architecture the tensor table takes and applies.
#pragma once

#include <string_view>

#include "model/decoder_hparams.h"

namespace sy::model {

class MetadataReader;

// The optional tensors of llama.cpp's loader (load_arch_tensors plus its generic pass that
// creates a `.scale` and an `.input_scale` for every projection). `applied` rules say whether the
// arch's graph uses a tensor its loader takes; a taken but unapplied tensor is accepted (as
// llama.cpp accepts it) and logged, never silently.
struct ArchTensorRules {
  bool qkv_bias = false;            // attn_{q,k,v}.bias, attn_qkv.bias (create_tensor_qkv)
  bool out_bias = false;            // attn_output.bias
  bool ffn_bias = false;            // ffn_{gate,up,down}.bias
  bool rope_freqs = false;          // rope_freqs.weight
  bool ssm_norm_tensors = false;    // ssm_{dt,b,c}_norm.weight (required when taken)
  bool ffn_scale_applied = false;   // ffn_{gate,up,down}.scale: build_ffn gets them (llama)
  bool ssm_scale_applied = false;   // ssm_in.scale, ssm_out.scale
  bool exps_scale_applied = false;  // ffn_*_exps.scale reach build_moe_ffn (llama; refused here)
};

struct ArchSpec {
  std::string_view name;
  // Sizes and the layer pattern from the keys llama.cpp reads for the arch (after the common
  // ones); throws naming the key.
  void (*read_hparams)(const MetadataReader& md, DecoderHParams& h);
  ArchTensorRules tensors;
};

// nullptr for an architecture the decoder does not run.
const ArchSpec* find_arch(std::string_view name);
// "llama, mamba, jamba"
const char* supported_archs();

}  // namespace sy::model
