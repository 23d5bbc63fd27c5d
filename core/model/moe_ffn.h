// The MoE FFN on a backend (llama.cpp build_moe_ffn with SiLU experts and softmax gating):
// router logits, moe_gate (top-k, optional renormalisation), grouped gate and up matmuls,
// SwiGLU, grouped down matmul, weighted combine. Shared by the llama (Mixtral) and jamba
// runtimes. Also counts expert activations per layer for the host counters.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"
#include "model/model.h"

namespace sy::model {

struct MoeWeights {
  const sy_tensor* gate_inp;   // F32 {n_embd, n_expert}
  const sy_tensor* gate_exps;  // {n_embd, n_ff, n_expert}
  const sy_tensor* up_exps;    // {n_embd, n_ff, n_expert}
  const sy_tensor* down_exps;  // {n_ff, n_embd, n_expert}
};

// Consecutive batch tokens [t0, t0 + n) that use k experts each (a request's light path may
// use fewer than the model's default).
struct TokenGroup {
  uint32_t t0, n, k;
};

// The batch's token groups for a model whose default is `default_k` of `n_expert` experts:
// consecutive sequences with the same SeqInput::n_expert_used share a group. Throws
// std::invalid_argument for an n_expert_used outside [0, n_expert].
std::vector<TokenGroup> token_groups(const std::vector<SeqInput>& seqs, uint32_t n_expert,
                                     uint32_t default_k);

class MoeFfn {
 public:
  MoeFfn(Backend& backend, uint32_t n_embd, uint32_t n_ff, uint32_t n_expert, uint32_t n_used,
         bool normalize, uint32_t n_moe_layers);

  // Grows scratch to n_tokens using up to max_k experts each; call before forward() each step.
  void reserve(uint32_t n_tokens, uint32_t max_k);
  // y{E, T} = MoE(x{E, T}) for MoE layer ordinal `moe_layer` (model layer `layer`); groups cover
  // the batch in order.
  void forward(uint32_t moe_layer, uint32_t layer, const MoeWeights& w, const sy_tensor& x,
               const sy_tensor& y, const std::vector<TokenGroup>& groups);
  // After the step's last op and synchronize: adds each layer's selections to the host counters
  // "expert_activations.<layer>.<expert>" and the number of distinct experts the step read to
  // "expert_loads.<layer>", reading the ids back once.
  void flush_counts();
  uint64_t scratch_bytes() const { return act_ ? act_->size() : 0; }
  uint32_t n_expert() const { return X_; }
  uint32_t n_used() const { return n_used_; }

 private:
  Backend& b_;
  const uint32_t E_, F_, X_, n_used_, n_moe_layers_;
  const bool normalize_;
  uint32_t cap_ = 0, cap_k_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_logits_ = 0, off_ids_ = 0, off_w_ = 0, off_gate_ = 0, off_up_ = 0, off_down_ = 0;
  struct Pending {
    uint32_t layer;
    uint64_t offset;  // of the group's ids in act_
    uint32_t k, n;
  };
  std::vector<Pending> pending_;
  std::vector<int32_t> host_ids_;
  std::vector<double> counts_;
};

}  // namespace sy::model
