// Hyperparameters of a `llama` GGUF, read with llama.cpp's keys and defaults.
#pragma once

#include <cstdint>
#include <string>

namespace sy::gguf {
class File;
}

namespace sy::model {

struct LlamaHParams {
  std::string arch;  // general.architecture
  uint32_t n_vocab = 0;
  uint32_t n_ctx = 0;
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_ff = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;
  uint32_t n_rot = 0;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  float rms_eps = 1e-5f;
  float attn_scale = 0.0f;  // 0: 1/sqrt(head_dim)
  bool tied_output = false;
  uint32_t n_expert = 0;  // > 0: Mixtral-style MoE in every layer
  uint32_t n_expert_used = 0;
};

// Throws std::runtime_error naming the file and the key.
LlamaHParams read_llama_hparams(const sy::gguf::File& file);

}  // namespace sy::model
