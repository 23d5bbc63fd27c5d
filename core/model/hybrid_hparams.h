// Hyperparameters of a `mamba` or `jamba` GGUF, read with llama.cpp's keys: the SSM sizes, the
// per-layer head_count_kv array (0 = recurrent layer) and which layers carry an MoE FFN.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sy::gguf {
class File;
}

namespace sy::model {

struct HybridHParams {
  std::string arch;  // "mamba" or "jamba"
  uint32_t n_vocab = 0, n_ctx = 0, n_embd = 0, n_layer = 0, n_ff = 0;
  uint32_t n_head = 0, head_dim = 0, n_head_kv = 0;  // attention layers (all share n_head_kv)
  float rms_eps = 1e-5f;
  uint32_t d_conv = 0, d_inner = 0, d_state = 0, dt_rank = 0;
  uint32_t n_expert = 0, n_expert_used = 0;
  bool tied_output = false;
  bool dt_b_c_norms = false;    // jamba: RMS norms on dt, B and C after ssm_x
  bool has_ffn = false;         // jamba: every layer has one; mamba: none
  std::vector<bool> recurrent;  // per layer: Mamba mixer (else attention)
  std::vector<bool> moe;        // per layer: ffn_gate_inp present

  uint32_t n_attn_layers() const;
  uint32_t n_recurrent_layers() const { return n_layer - n_attn_layers(); }
  // F32 floats of one sequence's recurrent state in one layer: conv, then ssm.
  uint64_t conv_state_floats() const { return uint64_t(d_conv - 1) * d_inner; }
  uint64_t ssm_state_floats() const { return uint64_t(d_state) * d_inner; }
};

// Throws std::runtime_error naming the file and the key (llama.cpp's messages where it has one).
HybridHParams read_hybrid_hparams(const gguf::File& file);

}  // namespace sy::model
