// The hyperparameters of every architecture the decoder runs (llama, mamba, jamba), read with
// llama.cpp's keys and defaults, and the per-layer pattern that makes an architecture: each layer
// is a token mixer (attention, with or without RoPE, or a Mamba SSM) and an optional FFN (dense
// SwiGLU or MoE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sy::gguf {
class File;
}

namespace sy::model {

enum class Mixer : uint8_t { attention, ssm };
enum class FfnKind : uint8_t { none, dense, moe };

struct LayerSpec {
  Mixer mixer = Mixer::attention;
  FfnKind ffn = FfnKind::dense;
  bool operator==(const LayerSpec&) const = default;
};

// The rotation of q and k in attention layers, with the values llama.cpp's context derives from
// the file's rope keys (llama_context: freq_scale, ext_factor, attn_factor, n_ctx_orig_yarn).
struct RopeParams {
  bool enabled = false;  // llama rotates q and k; jamba's attention has no positional encoding
  uint32_t n_rot = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float ext_factor = 0.0f;  // 1 with rope.scaling.type yarn
  float attn_factor = 1.0f;
  float beta_fast = 32.0f, beta_slow = 1.0f;
  uint32_t n_ctx_orig = 0;
  // The 1.0 rope op computes this rotation (no YaRN, unit magnitude; frequency factors aside).
  bool plain() const { return ext_factor == 0.0f && attn_factor == 1.0f; }
};

struct DecoderHParams {
  std::string arch;  // general.architecture
  uint32_t n_vocab = 0, n_ctx = 0, n_embd = 0, n_layer = 0, n_ff = 0;
  uint32_t n_head = 0, n_head_kv = 0, head_dim = 0;  // attention layers (all alike)
  float rms_eps = 1e-5f;
  float attn_scale = 0.0f;  // the softmax scale of q.k
  RopeParams rope;
  uint32_t d_conv = 0, d_inner = 0, d_state = 0, dt_rank = 0;  // Mamba layers
  bool dt_b_c_norms = false;  // RMS norms on dt, B and C after ssm_x (jamba; mamba's dt_b_c_rms)
  uint32_t n_expert = 0, n_expert_used = 0;
  bool moe_normalize = false;  // renormalise the top-k weights (llama: yes; jamba: no)
  bool tied_output = false;
  std::vector<LayerSpec> layers;

  uint32_t n_attn_layers() const;
  uint32_t n_recurrent_layers() const { return n_layer - n_attn_layers(); }
  uint32_t n_moe_layers() const;
  std::vector<bool> recurrent() const;  // per layer: a Mamba mixer
  std::vector<bool> moe() const;        // per layer: an MoE FFN
  uint32_t q_width() const { return head_dim * n_head; }
  uint32_t kv_width() const { return head_dim * n_head_kv; }
  // F32 floats of one sequence's recurrent state in one layer: conv, then ssm.
  uint64_t conv_state_floats() const { return uint64_t(d_conv - 1) * d_inner; }
  uint64_t ssm_state_floats() const { return uint64_t(d_state) * d_inner; }
};

// Reads the keys llama.cpp's loader reads for the file's architecture. Throws std::runtime_error
// naming the file and the key: a missing or malformed key, or a value that changes the math in a
// way this engine does not implement (see core/model/ARCH-KEYS.md for the rule).
DecoderHParams read_decoder_hparams(const gguf::File& file);

}  // namespace sy::model
