// The type of each matrix of a file of a llama.cpp file type (Q4_K_M, ...), chosen by the rules
// llama-quantize applies without an importance matrix (llama-quant.cpp, llama_tensor_get_type):
// the output matrix and some attn_v / attn_qkv / ffn_down / attn_output layers get more bits,
// and a matrix whose rows are not whole blocks of the chosen type falls back to a type whose
// blocks fit. `pure` is llama-quantize's --pure: every matrix it quantizes (the output and the
// token embedding too) takes the file type's base type, with no fallback.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_desc.h"
#include "modelgen/generator.h"
#include "switchyard/common/file_type.h"

namespace sy::model {

class QuantMix {
 public:
  QuantMix(const dtype::FileType& ftype, const ModelDesc& d, bool pure = false);
  QuantMix(const dtype::FileType& ftype, const ModelShape& shape, bool pure = false);

  // The dtype of matrix `name` (GGUF tensor name) whose rows hold ne0 values. Throws
  // std::invalid_argument when no type llama.cpp would use fits the rows.
  uint32_t type_for(const std::string& name, int64_t ne0) const;
  // The file is llama-quantize's output rather than a converter's F32 one.
  bool requantized() const { return ftype_.base != SY_DTYPE_F32; }

 private:
  uint32_t chosen(const std::string& name, int64_t ne0) const;  // before the row-size fallback
  bool is(const char* ftype_name) const;

  const dtype::FileType& ftype_;
  ModelDesc d_;
  bool pure_;
  uint32_t n_gqa_;                  // llama.cpp's n_gqa() of layer 0 (0: no heads there)
  std::vector<int> attn_v_before_;  // per layer: attn_v-like tensors (attn_v, attn_qkv) before it
  int n_attn_v_;
  std::vector<int> ffn_down_before_;  // per layer: ffn_down tensors of dense layers before it
};

}  // namespace sy::model
