// llama.cpp's file types (llama_ftype, stored as general.file_type): the name llama-quantize
// takes ("Q4_K_M"), the id, and the dtype of most of a file's matrices. The _S/_M/_L mixes give
// some tensors more bits; core/modelgen/quant_mix.h chooses each tensor's type as llama-quantize
// does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "switchyard/abi/types.h"

namespace sy::dtype {

struct FileType {
  const char* name;  // llama.cpp's name, upper case
  uint32_t id;       // llama_ftype
  uint32_t base;     // sy_dtype of most matrices
};

inline constexpr FileType kFileTypes[] = {
    {"F32", 0, SY_DTYPE_F32},        {"F16", 1, SY_DTYPE_F16},
    {"BF16", 32, SY_DTYPE_BF16},     {"Q4_0", 2, SY_DTYPE_Q4_0},
    {"Q4_1", 3, SY_DTYPE_Q4_1},      {"Q5_0", 8, SY_DTYPE_Q5_0},
    {"Q5_1", 9, SY_DTYPE_Q5_1},      {"Q8_0", 7, SY_DTYPE_Q8_0},
    {"Q2_K", 10, SY_DTYPE_Q2_K},     {"Q3_K_S", 11, SY_DTYPE_Q3_K},
    {"Q3_K_M", 12, SY_DTYPE_Q3_K},   {"Q3_K_L", 13, SY_DTYPE_Q3_K},
    {"Q4_K_S", 14, SY_DTYPE_Q4_K},   {"Q4_K_M", 15, SY_DTYPE_Q4_K},
    {"Q5_K_S", 16, SY_DTYPE_Q5_K},   {"Q5_K_M", 17, SY_DTYPE_Q5_K},
    {"Q6_K", 18, SY_DTYPE_Q6_K},     {"IQ4_NL", 25, SY_DTYPE_IQ4_NL},
    {"IQ4_XS", 30, SY_DTYPE_IQ4_XS}, {"MXFP4_MOE", 38, SY_DTYPE_MXFP4},
};

// By name in any case ("q4_k_m" or "Q4_K_M"); nullptr if unknown.
const FileType* find_file_type(std::string_view name);
// By general.file_type; nullptr if not one of kFileTypes.
const FileType* file_type_by_id(uint32_t id);
// The lower-case names, comma separated: "f32, f16, bf16, q4_0, ...".
std::string file_type_names();

}  // namespace sy::dtype
