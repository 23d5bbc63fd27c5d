// The element-type table: for every dtype Switchyard implements, ggml's id and name, the block
// size and bytes, and the row codecs (dequantise; reference-quantise). The GGUF reader and
// writer, config, the model generator, `switchyard info` and every backend's weight-dtype mask
// read it, so adding a dtype is one entry in kTable plus its codecs (codec_*.cpp) and kernels
// (the GPU loader in backends/gpu/quant_load.cuh).
#pragma once

#include <cstdint>
#include <string>

#include "switchyard/abi/types.h"
#include "switchyard/common/block_formats.h"
#include "switchyard/common/half.h"

namespace sy::dtype {

// n values (a multiple of the block size) of a row: stored bytes to F32, F32 to stored bytes.
using ToF32 = void (*)(const void* src, float* dst, int64_t n);
using FromF32 = void (*)(const float* src, void* dst, int64_t n);

namespace codec {
#define SY_DECLARE_CODEC(t)                                \
  void t##_to_f32(const void* src, float* dst, int64_t n); \
  void t##_from_f32(const float* src, void* dst, int64_t n);
SY_DECLARE_CODEC(f32)
SY_DECLARE_CODEC(f16)
SY_DECLARE_CODEC(bf16)
SY_DECLARE_CODEC(q4_0)
SY_DECLARE_CODEC(q4_1)
SY_DECLARE_CODEC(q5_0)
SY_DECLARE_CODEC(q5_1)
SY_DECLARE_CODEC(q8_0)
SY_DECLARE_CODEC(q2_k)
SY_DECLARE_CODEC(q3_k)
SY_DECLARE_CODEC(q4_k)
SY_DECLARE_CODEC(q5_k)
SY_DECLARE_CODEC(q6_k)
SY_DECLARE_CODEC(iq4_nl)
SY_DECLARE_CODEC(iq4_xs)
SY_DECLARE_CODEC(mxfp4)
#undef SY_DECLARE_CODEC
}  // namespace codec

struct Traits {
  uint32_t id;          // sy_dtype == ggml's type id
  const char* name;     // ggml's name in upper case, as llama.cpp's tools print it
  int32_t block_elems;  // values per block
  int32_t block_bytes;  // bytes per block
  ToF32 to_f32;         // nullptr: not a weight type (I32 holds indices)
  // What llama-quantize writes for this type without an importance matrix (ggml's
  // quantize_row_*_ref; for IQ4_NL / IQ4_XS, quantize_iq4_* with no weights).
  FromF32 from_f32;
};

inline constexpr Traits kTable[] = {
    {SY_DTYPE_F32, "F32", 1, 4, codec::f32_to_f32, codec::f32_from_f32},
    {SY_DTYPE_F16, "F16", 1, 2, codec::f16_to_f32, codec::f16_from_f32},
    {SY_DTYPE_BF16, "BF16", 1, 2, codec::bf16_to_f32, codec::bf16_from_f32},
    {SY_DTYPE_Q4_0, "Q4_0", kQ8Block, sizeof(BlockQ4_0), codec::q4_0_to_f32, codec::q4_0_from_f32},
    {SY_DTYPE_Q4_1, "Q4_1", kQ8Block, sizeof(BlockQ4_1), codec::q4_1_to_f32, codec::q4_1_from_f32},
    {SY_DTYPE_Q5_0, "Q5_0", kQ8Block, sizeof(BlockQ5_0), codec::q5_0_to_f32, codec::q5_0_from_f32},
    {SY_DTYPE_Q5_1, "Q5_1", kQ8Block, sizeof(BlockQ5_1), codec::q5_1_to_f32, codec::q5_1_from_f32},
    {SY_DTYPE_Q8_0, "Q8_0", kQ8Block, sizeof(BlockQ8_0), codec::q8_0_to_f32, codec::q8_0_from_f32},
    {SY_DTYPE_Q2_K, "Q2_K", kSuperBlock, sizeof(BlockQ2K), codec::q2_k_to_f32,
     codec::q2_k_from_f32},
    {SY_DTYPE_Q3_K, "Q3_K", kSuperBlock, sizeof(BlockQ3K), codec::q3_k_to_f32,
     codec::q3_k_from_f32},
    {SY_DTYPE_Q4_K, "Q4_K", kSuperBlock, sizeof(BlockQ4K), codec::q4_k_to_f32,
     codec::q4_k_from_f32},
    {SY_DTYPE_Q5_K, "Q5_K", kSuperBlock, sizeof(BlockQ5K), codec::q5_k_to_f32,
     codec::q5_k_from_f32},
    {SY_DTYPE_Q6_K, "Q6_K", kSuperBlock, sizeof(BlockQ6K), codec::q6_k_to_f32,
     codec::q6_k_from_f32},
    {SY_DTYPE_IQ4_NL, "IQ4_NL", kQ8Block, sizeof(BlockIq4Nl), codec::iq4_nl_to_f32,
     codec::iq4_nl_from_f32},
    {SY_DTYPE_IQ4_XS, "IQ4_XS", kSuperBlock, sizeof(BlockIq4Xs), codec::iq4_xs_to_f32,
     codec::iq4_xs_from_f32},
    {SY_DTYPE_MXFP4, "MXFP4", kQ8Block, sizeof(BlockMxfp4), codec::mxfp4_to_f32,
     codec::mxfp4_from_f32},
    {SY_DTYPE_I32, "I32", 1, 4, nullptr, nullptr},
};

// The entry of dtype t; nullptr when Switchyard does not implement it.
constexpr const Traits* traits(uint32_t t) {
  for (const Traits& e : kTable)
    if (e.id == t) return &e;
  return nullptr;
}
constexpr bool is_known(uint32_t t) {
  return traits(t) != nullptr;
}
// Values and bytes per block; 0 for an unknown type.
constexpr int64_t block_elems(uint32_t t) {
  return traits(t) ? traits(t)->block_elems : 0;
}
constexpr int64_t block_bytes(uint32_t t) {
  return traits(t) ? traits(t)->block_bytes : 0;
}
// ggml's name of an implemented type, else "unknown".
constexpr const char* name(uint32_t t) {
  return traits(t) ? traits(t)->name : "unknown";
}
// Bytes of one row of n values; caller guarantees n % block_elems == 0.
constexpr int64_t row_bytes(uint32_t t, int64_t n) {
  return n / block_elems(t) * block_bytes(t);
}
// True for F16/BF16-style element types and quantised blocks alike: anything with a codec.
constexpr bool is_weight(uint32_t t) {
  return traits(t) && traits(t)->to_f32;
}
// Every weight dtype as a bit mask (bit id), for sy_plugin_info / sy_device_info.weight_dtypes.
constexpr uint64_t weight_mask() {
  uint64_t m = 0;
  for (const Traits& e : kTable)
    if (e.to_f32) m |= 1ull << e.id;
  return m;
}
static_assert(SY_DTYPE_IQ4_XS < 64 && SY_DTYPE_BF16 < 64, "weight masks hold ids below 64");

// Converts one row of n values of weight type t at src to F32 (no-op for a non-weight type).
inline void row_to_f32(uint32_t t, const void* src, float* dst, int64_t n) {
  if (const Traits* e = traits(t); e && e->to_f32) e->to_f32(src, dst, n);
}
// Converts n F32 values to one row of weight type t at dst (n % block_elems(t) == 0).
inline void row_from_f32(uint32_t t, const float* src, void* dst, int64_t n) {
  if (const Traits* e = traits(t); e && e->from_f32) e->from_f32(src, dst, n);
}

// "F32, F16, ..., IQ4_XS, I32": every implemented type in table order, for error messages.
std::string type_names();
// ggml's name for a type id Switchyard does not implement ("IQ2_XXS"), or "" if ggml has none.
const char* ggml_only_name(uint32_t t);

// ggml's quantize_row_q8_0_ref on whole blocks (kept by name: the CPU kernels use it).
inline void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  codec::q8_0_from_f32(x, y, n);
}

}  // namespace sy::dtype
