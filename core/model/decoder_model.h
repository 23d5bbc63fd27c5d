// The one decoder runtime behind every architecture: embeddings, then each layer as its
// architecture's descriptor runs it (model/arch/), then the output norm and head. The runtime
// owns what every layer shares: the batch flattened for the ops, the recurrent-state slots and
// the prefix-cache snapshot copies, the MoE FFN, the scratch arena. Weights are used in place
// from the memory-mapped GGUF where the backend can wrap host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"
#include "model/arch/arch.h"
#include "model/blocks/moe.h"
#include "model/kv_cache.h"
#include "model/layer_pass.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "model/model_weights.h"
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

  const ModelDesc& hparams() const { return d_; }
  const ModelInfo& info() const override { return info_; }
  void reserve_state_slots(uint32_t n_slots) override;
  uint64_t state_bytes_allocated() const override { return state_.bytes_allocated(); }
  uint64_t activation_bytes() const override;
  // With recurrent layers every sequence needs a distinct state_slot in [0, reserved slots); its
  // state is zeroed when pos0 == 0.
  std::vector<float> forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                             bool all_logits = false) override;

 private:
  void fill_info();
  OpNeeds op_needs() const;
  void ensure_buffers(uint32_t n_tokens, uint32_t n_out);

  const gguf::File& file_;
  Backend& backend_;
  ModelDesc d_;
  const Arch& arch_;
  WeightMap weights_;
  ModelWeights w_;
  RecurrentState state_;
  std::unique_ptr<MoeFfn> moe_;
  std::unique_ptr<Buffer> ones_;  // unit norm weights (mamba with ssm.dt_b_c_rms, no tensors)
  sy_tensor ones_r_{}, ones_s_{};
  ModelInfo info_;

  // Activations, grown to the largest batch seen: the residual stream, its normed copy and the
  // blocks' output ({E, T} each), the rows that want logits and their logits; and the layers'
  // scratch arena.
  uint32_t cap_tokens_ = 0, cap_out_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_xn_ = 0, off_mix_ = 0, off_sel_ = 0, off_logits_ = 0, off_temp_ = 0, off_ple_ = 0;
  Scratch scratch_;
};

}  // namespace sy::model
