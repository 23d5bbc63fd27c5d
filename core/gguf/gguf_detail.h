// Helpers shared by the GGUF reader, lookups and writer (not installed, not public API).
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf.h"

namespace sy::gguf::detail {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kDefaultAlignment = 32;
constexpr int kMaxArrayDepth = 8;     // arrays nested deeper than this are refused
constexpr size_t kMaxNameBytes = 63;  // ggml's GGML_MAX_NAME (64) includes the NUL
constexpr const char* kAlignmentKey = "general.alignment";

// Throws Error(code, "<origin>: <errc_name>: <detail>").
[[noreturn]] void fail(const std::string& origin, Errc code, const std::string& detail);

bool is_value_type(uint32_t t);
// Fewest bytes a value of type t takes in a file (its size when fixed).
uint64_t min_value_bytes(ValueType t);
// "UINT32", or "ARRAY of STRING" for arrays.
std::string describe_type(const Value& v);
inline bool is_pow2(uint64_t a) {
  return a != 0 && (a & (a - 1)) == 0;
}

// Checks ne[0..n_dims) (each >= 1, element count within int64) and the type (known, ne[0] a
// multiple of its block) of the tensor named in `subject`; returns its size in bytes.
uint64_t tensor_nbytes(const std::string& origin, const std::string& subject, uint32_t type,
                       const int64_t* ne, uint32_t n_dims);

}  // namespace sy::gguf::detail
