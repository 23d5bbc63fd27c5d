// The MoE FFN on a backend, as llama.cpp's build_moe_ffn computes it: router logits, moe_gate
// (softmax or sigmoid, a selection bias, top-k, optional renormalisation and scale), grouped
// expert matmuls (separate gate and up tensors or a fused gate_up, per-expert scales, an optional
// latent projection around them), SwiGLU or ungated relu^2, the weighted combine, and an optional
// shared expert (with Qwen's sigmoid gate) added to it. Also counts expert activations per layer
// for the host counters.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"
#include "model/blocks/ffn.h"
#include "model/layer_pass.h"
#include "model/model.h"
#include "model/tensor_table.h"

namespace sy::model {

struct MoeWeights {
  Linear router;  // ffn_gate_inp: F32 {n_embd, n_expert}, with gpt-oss's bias {n_expert}
  const sy_tensor* selection_bias = nullptr;      // F32 {n_expert} (exp_probs_b), or null
  sy_tensor gate_exps{}, up_exps{}, down_exps{};  // {in, n_ff_exp, X}; gate absent: ungated
  uint64_t expert_stride = 0;  // bytes between experts of gate/up (a fused gate_up), or 0
  // Per-expert output scales {n_expert} (llama.cpp's `.scale` of the expert tensors), or null.
  const sy_tensor *gate_scale = nullptr, *up_scale = nullptr, *down_scale = nullptr;
  // gpt-oss's expert biases {width, n_expert}, or null.
  const sy_tensor *gate_bias = nullptr, *up_bias = nullptr, *down_bias = nullptr;
  Linear latent_down, latent_up;  // Nemotron's latent projections around the experts, or absent
  FfnWeights shared;              // the shared expert, or absent
  const sy_tensor* shared_gate = nullptr;  // F32 {n_embd}: sigmoid gate of the shared expert
  // F32 {n_embd}: Gemma 4's router input is rms_norm(x) / sqrt(n_embd) times this, or null.
  const sy_tensor* router_in_scale = nullptr;
  uint32_t moe_index = 0;                  // ordinal among MoE layers
};

// What a family's MoE layers take of llama.cpp's optional MoE tensors.
struct MoeRules {
  bool gated = true;              // ffn_gate_exps exists (relu^2 experts have none)
  Take expert_scales = Take::no;  // ffn_*_exps.scale {n_expert}
  bool selection_bias = false;    // exp_probs_b.bias (required when true)
  bool fused_gate_up = false;     // ffn_gate_up_exps may replace gate and up
  bool latent = false;            // ffn_latent_down / _up when moe_latent > 0
  bool shared = false;            // a shared expert when n_ff_shexp > 0
  bool shared_gate = false;       // ffn_gate_inp_shexp (Qwen): sigmoid-gated shared expert
  LinearRules shared_rules;       // the shared expert's projections
  bool writer_order = false;      // jamba's converter order: router, gate, down, up
  bool biases = false;            // the router's and the experts' `.bias` (required when true)
};

void moe_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const MoeRules& r, MoeWeights& w);

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
  MoeFfn(Backend& backend, const ModelDesc& d);

  // Grows scratch to n_tokens using up to max_k experts each; call before forward() each step.
  void reserve(uint32_t n_tokens, uint32_t max_k);
  // y{E, T} = MoE(x{E, T}) for model layer `layer`; the pass's groups cover the batch in order.
  // The router reads router_x where given (Gemma 4 routes on another norm of the stream), else
  // x. The shared expert's temporaries come from the pass's scratch.
  void forward(LayerPass& p, uint32_t layer, const MoeWeights& w, const sy_tensor& x,
               const sy_tensor& y, const sy_tensor* router_x = nullptr);
  // After the step's last op and synchronize: adds each layer's selections to the host counters
  // "expert_activations.<layer>.<expert>" and the number of distinct experts the step read to
  // "expert_loads.<layer>", reading the ids back once.
  void flush_counts();
  uint64_t scratch_bytes() const { return act_ ? act_->size() : 0; }
  uint32_t n_expert() const { return X_; }
  uint32_t n_used() const { return n_used_; }

 private:
  Backend& b_;
  const ModelDesc& d_;
  const uint32_t E_, F_, X_, n_used_, n_moe_layers_;
  const uint32_t in_;  // the experts' input width: the latent size, or n_embd
  uint32_t cap_ = 0, cap_k_ = 0;
  std::unique_ptr<Buffer> act_;
  uint64_t off_logits_ = 0, off_ids_ = 0, off_w_ = 0, off_gate_ = 0, off_up_ = 0, off_down_ = 0,
           off_latent_ = 0;
  struct Pending {
    uint32_t layer;
    uint64_t offset;  // of the group's ids in act_
    uint32_t k, n;
  };
  std::vector<Pending> pending_;
  std::vector<int32_t> host_ids_;
  std::vector<double> counts_;
};

// Scratch floats per token the shared expert takes from the pass.
uint64_t moe_scratch(const ModelDesc& d);

}  // namespace sy::model
