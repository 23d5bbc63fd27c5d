// Reads a model file's hyperparameter keys for the architecture loaders; every error names the
// file, as llama.cpp's loader does.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "gguf/gguf.h"

namespace sy::model {

class MetadataReader {
 public:
  explicit MetadataReader(const gguf::File& file) : f_(file) {}

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

 private:
  const gguf::File& f_;
};

}  // namespace sy::model
