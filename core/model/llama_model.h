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
#include "model/model.h"
#include "model/moe_ffn.h"
#include "model/weight_map.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

class LlamaModel : public Model {
 public:
  // The file must outlive the model (weights may be read in place).
  LlamaModel(const gguf::File& file, Backend& backend);
  ~LlamaModel();

  const LlamaHParams& hparams() const { return hp_; }
  const ModelInfo& info() const override { return info_; }
  std::vector<float> forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                             bool all_logits = false) override;
  uint64_t activation_bytes() const override;

 private:
  struct Layer {
    sy_tensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
    MoeWeights exps{};  // Mixtral: replaces w_gate / w_up / w_down
  };
  // A norm (1-D, F32 only) or a matrix of a dtype the backend multiplies.
  const sy_tensor& weight(const std::string& name, std::initializer_list<int64_t> ne);
  void ensure_scratch(uint32_t n_tokens, uint32_t n_out);

  Backend& backend_;
  LlamaHParams hp_;
  WeightMap weights_;
  const sy_tensor* tok_embd_ = nullptr;
  const sy_tensor* out_norm_ = nullptr;
  const sy_tensor* output_ = nullptr;
  std::vector<Layer> layers_;
  std::unique_ptr<MoeFfn> moe_;  // when n_expert > 0
  ModelInfo info_;

  // Activations, grown to the largest batch seen.
  uint32_t cap_tokens_ = 0, cap_out_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_x_ = 0, off_xn_ = 0, off_q_ = 0, off_k_ = 0, off_v_ = 0, off_attn_ = 0,
           off_gate_ = 0, off_up_ = 0, off_sel_ = 0, off_logits_ = 0;
};

}  // namespace sy::model
