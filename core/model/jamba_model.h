// The `jamba` and `mamba` architectures on a backend (llama.cpp's src/models/jamba.cpp,
// mamba.cpp and the Mamba-1 layer of graph-context-mamba.cpp). Each layer is either a Mamba
// mixer (ssm_in -> causal conv1d -> S6 selective scan with a per-sequence recurrent state ->
// ssm_out) or NoPE attention over the paged KV cache; jamba adds an FFN to every layer, MoE
// (softmax gating, no renormalisation) where the file has ffn_gate_inp. Tensor names, keys and
// shapes: model/JAMBA-GGUF.md.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"
#include "model/hybrid_hparams.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/moe_ffn.h"
#include "model/recurrent_state.h"
#include "model/weight_map.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

class JambaModel : public Model {
 public:
  // The file must outlive the model. Throws naming the file, tensor or missing backend op.
  JambaModel(const gguf::File& file, Backend& backend);
  ~JambaModel() override;

  const HybridHParams& hparams() const { return hp_; }
  const ModelInfo& info() const override { return info_; }
  void reserve_state_slots(uint32_t n_slots) override;
  uint64_t state_bytes_allocated() const override { return state_.bytes_allocated(); }
  uint64_t activation_bytes() const override;
  // Every sequence of a model with recurrent layers needs a distinct state_slot in
  // [0, reserved slots); its state is zeroed when pos0 == 0.
  std::vector<float> forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                             bool all_logits = false) override;

 private:
  struct Layer {
    bool recurrent = false, moe = false;
    int32_t attn_index = -1, recr_index = -1, moe_index = -1;  // ordinals among their kind
    const sy_tensor* attn_norm = nullptr;
    // Mamba mixer; the fused projections are split into row views (x | z and dt | B | C).
    sy_tensor in_x{}, in_z{}, x_dt{}, x_b{}, x_c{};
    const sy_tensor *conv_w = nullptr, *conv_b = nullptr, *dt_norm = nullptr, *b_norm = nullptr,
                    *c_norm = nullptr, *dt_w = nullptr, *dt_b = nullptr, *a = nullptr, *d = nullptr,
                    *out = nullptr;
    // Attention mixer
    const sy_tensor *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
    // FFN (jamba)
    const sy_tensor *ffn_norm = nullptr, *gate = nullptr, *up = nullptr, *down = nullptr;
    MoeWeights exps{};
  };
  struct Batch;  // the flattened inputs of one forward

  void load_layers();
  void fill_info();
  void ensure_scratch(uint32_t n_tokens, uint32_t n_out);
  void mamba_mixer(const Layer& L, const Batch& bt, const sy_tensor& xn, const sy_tensor& out);
  void attention_mixer(const Layer& L, const Batch& bt, KvCache& cache, const sy_tensor& xn,
                       const sy_tensor& out);

  const gguf::File& file_;
  Backend& backend_;
  HybridHParams hp_;
  WeightMap weights_;
  const sy_tensor* tok_embd_ = nullptr;
  const sy_tensor* out_norm_ = nullptr;
  const sy_tensor* output_ = nullptr;
  std::vector<Layer> layers_;
  RecurrentState state_;
  std::unique_ptr<MoeFfn> moe_;
  std::unique_ptr<Buffer> ones_;  // unit norm weights (mamba with ssm.dt_b_c_rms, no tensors)
  sy_tensor ones_r_{}, ones_s_{};
  ModelInfo info_;

  uint32_t cap_tokens_ = 0, cap_out_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_x_ = 0, off_xn_ = 0, off_mix_ = 0, off_u_ = 0, off_z_ = 0, off_uc_ = 0, off_dtr_ = 0,
           off_b_ = 0, off_c_ = 0, off_dt_ = 0, off_y_ = 0, off_q_ = 0, off_k_ = 0, off_v_ = 0,
           off_attn_ = 0, off_gate_ = 0, off_up_ = 0, off_sel_ = 0, off_logits_ = 0;
};

}  // namespace sy::model
