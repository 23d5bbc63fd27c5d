// Writes random-weight `llama` GGUF models of any shape, deterministic from a seed, with
// llama.cpp's keys, tensor names and a byte-level "llama" vocabulary, so other GGUF engines
// load them too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sy::model {

struct ModelShape {
  std::string arch = "llama";
  uint32_t n_vocab = 259;
  uint32_t n_ctx = 512;
  uint32_t n_embd = 64;
  uint32_t n_layer = 2;
  uint32_t n_ff = 128;
  uint32_t n_head = 4;
  uint32_t n_head_kv = 2;
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_output = false;
};

// Named shapes: dense-tiny (tests), dense-small (the embedded default), dense-100m (benchmarks).
// Throws std::invalid_argument listing the known names.
ModelShape preset_shape(const std::string& name);
std::vector<std::string> preset_names();

// dtype: "f32", "f16", "bf16" or "q8_0" for the matrices; norms stay F32 as in llama.cpp.
void write_random_llama(const ModelShape& shape, const std::string& dtype, uint64_t seed,
                        const std::filesystem::path& path);

uint64_t count_params(const ModelShape& shape);

}  // namespace sy::model
