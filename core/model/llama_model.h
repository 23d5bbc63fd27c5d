// The `llama` architecture on a backend: RMSNorm, RoPE (adjacent pairs), grouped-query attention
// over the paged KV cache, SwiGLU FFN, tied or untied output. Weights are used in place from the
// memory-mapped GGUF where the backend can wrap host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/backend.h"
#include "model/hparams.h"
#include "model/kv_cache.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

// One sequence's share of a forward pass: n_tokens tokens at positions pos0 .. pos0+n_tokens-1,
// whose keys go to the slots its block table maps them to.
struct SeqInput {
  const int32_t* tokens = nullptr;
  uint32_t n_tokens = 0;
  uint32_t pos0 = 0;
  const std::vector<int32_t>* blocks = nullptr;
  bool want_logits = true;  // logits of its last token (or of all tokens with all_logits)
};

class LlamaModel {
 public:
  // The file must outlive the model (weights may be read in place).
  LlamaModel(const gguf::File& file, Backend& backend);
  ~LlamaModel();

  const LlamaHParams& hparams() const { return hp_; }
  Backend& backend() { return backend_; }
  uint64_t weight_bytes() const { return weight_bytes_; }  // bytes read per token (all weights)
  uint64_t n_params() const { return n_params_; }
  uint32_t kv_row_width() const { return hp_.head_dim * hp_.n_head_kv; }

  // Runs one step. Returns logits rows (n_vocab floats each) in sequence order: one per sequence
  // that wants logits, or one per token of those sequences when all_logits.
  std::vector<float> forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                             bool all_logits = false);

 private:
  struct Layer {
    sy_tensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
  };
  const sy_tensor& weight(const std::string& name, std::initializer_list<int64_t> ne);
  void ensure_scratch(uint32_t n_tokens, uint32_t n_out);

  const gguf::File& file_;
  Backend& backend_;
  LlamaHParams hp_;
  std::unique_ptr<Buffer> weights_;
  const uint8_t* weights_base_ = nullptr;
  std::vector<std::unique_ptr<sy_tensor>> owned_;
  const sy_tensor* tok_embd_ = nullptr;
  const sy_tensor* out_norm_ = nullptr;
  const sy_tensor* output_ = nullptr;
  std::vector<Layer> layers_;
  uint64_t weight_bytes_ = 0, n_params_ = 0;

  // Activations, grown to the largest batch seen.
  uint32_t cap_tokens_ = 0, cap_out_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_x_ = 0, off_xn_ = 0, off_q_ = 0, off_k_ = 0, off_v_ = 0, off_attn_ = 0,
           off_gate_ = 0, off_up_ = 0, off_sel_ = 0, off_logits_ = 0;
};

}  // namespace sy::model
