// Reads a model file's hyperparameter keys for the architecture loaders; every error names the
// file, as llama.cpp's loader does.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace sy::model {

class MetadataReader {
 public:
  explicit MetadataReader(const gguf::File& file) : f_(file) {}

  const gguf::File& file() const { return f_; }
  std::runtime_error fail(const std::string& what) const {
    return std::runtime_error(f_.origin() + ": " + what);
  }
  // An unsigned key that must fit 32 bits; without a default a missing key is an error.
  uint32_t u32(const std::string& key, std::optional<uint32_t> def) const {
    auto v = f_.get_uint(key);
    if (!v) {
      if (!def) throw fail("missing key " + key);
      return *def;
    }
    if (*v > UINT32_MAX) throw fail(key + " = " + std::to_string(*v) + " is out of range");
    return static_cast<uint32_t>(*v);
  }
  float f32(const std::string& key, std::optional<float> def) const {
    auto v = f_.get_float(key);
    if (!v) {
      if (!def) throw fail("missing key " + key);
      return *def;
    }
    return static_cast<float>(*v);
  }
  bool boolean(const std::string& key, bool def) const { return f_.get_bool(key).value_or(def); }
  std::string string(const std::string& key, const std::string& def) const {
    return f_.get_string(key).value_or(def);
  }
  // A scalar, or an array with one entry per layer (llama.cpp's get_key_or_arr).
  std::vector<uint32_t> per_layer(const std::string& key, uint32_t n_layer,
                                  std::vector<uint32_t> def) const {
    const gguf::Value* v = f_.find(key);
    if (!v) return def;
    if (v->type != gguf::ValueType::ARRAY) return std::vector<uint32_t>(n_layer, u32(key, 0u));
    if (v->array.size() != n_layer)
      throw fail("key " + key + " has wrong array length; expected " + std::to_string(n_layer) +
                 ", got " + std::to_string(v->array.size()));
    std::vector<uint32_t> out(n_layer);
    for (uint32_t l = 0; l < n_layer; ++l) {
      const gguf::Value& e = v->array[l];
      const bool sgn = e.type == gguf::ValueType::INT8 || e.type == gguf::ValueType::INT16 ||
                       e.type == gguf::ValueType::INT32 || e.type == gguf::ValueType::INT64;
      // Booleans count as 0 and 1 (Gemma 4's sliding_window_pattern, as llama.cpp's get_arr).
      const bool integer = sgn || e.type == gguf::ValueType::UINT8 ||
                           e.type == gguf::ValueType::UINT16 || e.type == gguf::ValueType::UINT32 ||
                           e.type == gguf::ValueType::UINT64 || e.type == gguf::ValueType::BOOL;
      if (!integer) throw fail("key " + key + " must be an array of integers");
      if (sgn ? (e.i < 0 || e.i > INT32_MAX) : e.u > UINT32_MAX)
        throw fail("key " + key + "[" + std::to_string(l) + "] is out of range");
      out[l] = static_cast<uint32_t>(sgn ? e.i : e.u);
    }
    return out;
  }

 private:
  const gguf::File& f_;
};

}  // namespace sy::model
