// The one decoder runtime behind llama, mamba and jamba: embeddings, then per layer an RMS-normed
// token mixer (attention over the paged KV cache, with or without RoPE, or a Mamba-1 selective
// scan with a per-sequence recurrent state) and an optional RMS-normed FFN (dense SwiGLU or MoE),
// each added to the residual stream, then the output norm and head. An architecture is its layer
// pattern and tensor table (model/arch.h, model/decoder_weights.h), as in llama.cpp. Weights are
// used in place from the memory-mapped GGUF where the backend can wrap host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"
#include "model/decoder_hparams.h"
#include "model/decoder_weights.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/moe_ffn.h"
#include "model/recurrent_state.h"
#include "model/weight_map.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

class DecoderModel : public Model {
 public:
  // The file must outlive the model. Throws naming the file, key, tensor or missing backend op.
  DecoderModel(const gguf::File& file, Backend& backend);
  ~DecoderModel() override;

  const DecoderHParams& hparams() const { return hp_; }
  const ModelInfo& info() const override { return info_; }
  void reserve_state_slots(uint32_t n_slots) override;
  uint64_t state_bytes_allocated() const override { return state_.bytes_allocated(); }
  uint64_t activation_bytes() const override;
  // With recurrent layers every sequence needs a distinct state_slot in [0, reserved slots); its
  // state is zeroed when pos0 == 0.
  std::vector<float> forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                             bool all_logits = false) override;

 private:
  struct Batch;  // the flattened inputs of one forward

  void fill_info();
  void ensure_scratch(uint32_t n_tokens, uint32_t n_out);
  void attention_mixer(const AttentionWeights& w, const Batch& bt, KvCache& cache,
                       const sy_tensor& xn, const sy_tensor& out);
  void ssm_mixer(const SsmWeights& w, const Batch& bt, const sy_tensor& xn, const sy_tensor& out);

  const gguf::File& file_;
  Backend& backend_;
  DecoderHParams hp_;
  WeightMap weights_;
  DecoderWeights w_;
  RecurrentState state_;
  std::unique_ptr<MoeFfn> moe_;
  std::unique_ptr<Buffer> ones_;  // unit norm weights (mamba with ssm.dt_b_c_rms, no tensors)
  sy_tensor ones_r_{}, ones_s_{};
  ModelInfo info_;

  // Activations, grown to the largest batch seen.
  uint32_t cap_tokens_ = 0, cap_out_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_x_ = 0, off_xn_ = 0, off_mix_ = 0, off_u_ = 0, off_z_ = 0, off_uc_ = 0, off_dtr_ = 0,
           off_b_ = 0, off_c_ = 0, off_dt_ = 0, off_y_ = 0, off_q_ = 0, off_k_ = 0, off_v_ = 0,
           off_attn_ = 0, off_gate_ = 0, off_up_ = 0, off_sel_ = 0, off_logits_ = 0;
};

}  // namespace sy::model
