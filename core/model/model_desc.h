// The one description of a model's sizes and layer pattern: what the loader reads from a file's
// keys (model/arch/), what the random-model writer writes and what the bench's cost model reads.
// Each layer is a token mixer (attention, a Mamba-1 or Mamba-2 state space, a gated delta net, a
// short convolution, or attention and Mamba-2 side by side) and an optional FFN (dense or MoE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sy::gguf {
class File;
}

namespace sy::model {

enum class Mixer : uint8_t {
  attention,  // attention over the paged KV cache
  ssm,        // Mamba-1 selective scan
  none,       // no mixer: an FFN-only block (Nemotron-H)
  ssm2,       // Mamba-2 scan
  gdn,        // gated delta net (Qwen3.5, Qwen3-Next)
  shortconv,  // LFM2's gated short convolution
  parallel,   // attention and Mamba-2 on the same input, summed (Falcon-H1)
};
enum class FfnKind : uint8_t { none, dense, moe };

struct LayerSpec {
  Mixer mixer = Mixer::attention;
  FfnKind ffn = FfnKind::dense;
  bool swa = false;  // attention over the model's sliding window, with its own RoPE (Gemma)
  bool operator==(const LayerSpec&) const = default;
  bool has_attention() const { return mixer == Mixer::attention || mixer == Mixer::parallel; }
  bool has_state() const {
    return mixer == Mixer::ssm || mixer == Mixer::ssm2 || mixer == Mixer::gdn ||
           mixer == Mixer::shortconv || mixer == Mixer::parallel;
  }
};

// The rotation of q and k in attention layers, with the values llama.cpp's context derives from
// the file's rope keys (llama_context: freq_scale, ext_factor, attn_factor, n_ctx_orig_yarn).
struct RopeParams {
  bool enabled = false;  // llama rotates q and k; jamba's attention has no positional encoding
  bool neox = false;     // pairs (x[i], x[i + n_rot/2]) instead of adjacent values
  uint32_t n_rot = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float ext_factor = 0.0f;  // 1 with rope.scaling.type yarn
  float attn_factor = 1.0f;
  float beta_fast = 32.0f, beta_slow = 1.0f;
  uint32_t n_ctx_orig = 0;
  bool factors = true;  // the model's rope_freqs apply (Gemma 4: only its global layers')
  // The 1.0 rope op computes this rotation (no YaRN, unit magnitude; frequency factors aside).
  bool plain() const { return ext_factor == 0.0f && attn_factor == 1.0f; }
};

// How MoE layers route (llama.cpp build_moe_ffn's arguments).
enum class MoeGating : uint8_t { softmax, sigmoid };
// Gated SiLU, ungated max(x, 0)^2, gated GELU (tanh approximation), or gpt-oss's clamped SwiGLU.
enum class FfnAct : uint8_t { swiglu, relu_sqr, geglu, swiglu_oai };

struct ModelDesc {
  std::string arch;  // general.architecture
  uint32_t n_vocab = 0, n_ctx = 0, n_embd = 0, n_layer = 0;
  float rms_eps = 1e-5f;
  bool tied_output = false;
  std::vector<LayerSpec> layers;

  // Attention layers: alike, but for Gemma 4's local layers' head size (head_dim_swa, 0: the
  // same) and its per-layer KV head counts (kv_heads, empty: n_head_kv everywhere).
  uint32_t n_head = 0, n_head_kv = 0, head_dim = 0;
  uint32_t head_dim_swa = 0;
  std::vector<uint32_t> kv_heads;
  bool v_norm = false;      // Gemma 4: V RMS-normed per head without a weight
  // Gemma 4 E2B/E4B: layers from kv_shared_from on (0: none) compute no K and V; they attend over
  // the cache of the last earlier layer of their kind (llama.cpp's layer_reuse), and the
  // per-layer input embeddings' width (0: none).
  uint32_t kv_shared_from = 0;
  uint32_t n_embd_per_layer = 0;
  float attn_scale = 0.0f;  // the softmax scale of q.k
  RopeParams rope;
  // The sliding window of the attention layers whose spec says swa (0: none), and their RoPE
  // (Gemma's local layers: their own base, no scaling).
  uint32_t window = 0;
  RopeParams rope_swa;
  // Llama 4's attention temperature tuning (Mistral 3): q of the token at pos times
  // log(floor((pos + attn_temp_offset) / attn_temp_floor) + 1) * attn_temp_scale + 1; 0: off.
  float attn_temp_scale = 0.0f, attn_temp_offset = 0.0f;
  uint32_t attn_temp_floor = 0;

  // FFN: dense width and activation.
  uint32_t n_ff = 0;
  FfnAct ffn_act = FfnAct::swiglu;

  // MoE: routing and expert sizes. n_ff_exp is the expert width (n_ff where the family has no
  // separate key); n_ff_shexp the shared expert's (0: none).
  uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
  MoeGating moe_gating = MoeGating::softmax;
  bool moe_normalize = false;  // renormalise the top-k weights (llama: yes; jamba: no)
  float moe_weights_scale = 1.0f;
  uint32_t moe_latent = 0;  // Nemotron's latent projection width (0: none)

  // Recurrent layers. Mamba-1: d_inner channels, d_state, a dt projection of rank dt_rank.
  // Mamba-2: dt_rank heads (llama.cpp's ssm.time_step_rank), n_group groups of B and C.
  // Gated delta net: dt_rank value heads, n_group key heads, d_state = the head size,
  // d_inner = value heads * head size. Short convolution: d_conv = l_cache, d_inner = n_embd.
  uint32_t d_conv = 0, d_inner = 0, d_state = 0, dt_rank = 0, n_group = 0;
  bool dt_b_c_norms = false;  // RMS norms on dt, B and C after ssm_x (jamba; mamba's dt_b_c_rms)

  // Granite's multipliers (0: off): embeddings times, mixer and FFN outputs times, logits divided.
  float embedding_scale = 0.0f, residual_scale = 0.0f, logit_scale = 0.0f;
  float logit_softcap = 0.0f;  // Gemma: logits = c tanh(logits / c) (0: off)
  float attn_softcap = 0.0f;   // Gemma 2: attention scores s = c tanh(s / c) (0: off)
  uint32_t n_nextn = 0;    // trailing multi-token-prediction blocks, loaded but not run
  uint32_t n_cls_out = 1;  // outputs of a reranker's classification head (loaded, not run)

  uint32_t n_attn_layers() const;
  uint32_t n_recurrent_layers() const;
  uint32_t n_moe_layers() const;
  std::vector<bool> recurrent() const;  // per layer: a mixer with per-sequence state
  std::vector<bool> moe() const;        // per layer: an MoE FFN
  // Of n positions, the keys a layer's attention reads: the last `window` in a sliding-window
  // layer.
  uint64_t attended(const LayerSpec& s, uint64_t n) const {
    return s.swa && window && n > window ? window : n;
  }
  uint32_t q_width() const { return head_dim * n_head; }
  uint32_t kv_width() const { return head_dim * n_head_kv; }
  // Layer il's head size, KV heads and widths.
  uint32_t head_dim_at(uint32_t il) const {
    return layers[il].swa && head_dim_swa ? head_dim_swa : head_dim;
  }
  uint32_t n_head_kv_at(uint32_t il) const { return kv_heads.empty() ? n_head_kv : kv_heads[il]; }
  uint32_t q_width_at(uint32_t il) const { return head_dim_at(il) * n_head; }
  uint32_t kv_width_at(uint32_t il) const { return head_dim_at(il) * n_head_kv_at(il); }
  // The layer whose KV cache layer il reads (il itself unless it shares an earlier one's).
  uint32_t kv_source(uint32_t il) const {
    if (!kv_shared_from || il < kv_shared_from) return il;
    return kv_shared_from - (layers[il].swa ? 2 : 1);
  }
  bool has_kv(uint32_t il) const { return layers[il].has_attention() && kv_source(il) == il; }
  // Makes the last n layers read an earlier layer's cache (n = 0: none). False, changing
  // nothing, unless layer n_layer - n - 1 is global and the one before it local: the layers
  // llama.cpp's layer_reuse reads.
  bool share_kv(uint32_t n);
  // Every attention layer's KV width, in layer order (the KV cache's rows; a layer that reads
  // another's cache has none).
  std::vector<uint32_t> kv_widths() const;
  // Every attention layer's sliding window, in layer order (0: a global layer).
  std::vector<uint32_t> kv_windows() const;
  // llama.cpp's set_swa_pattern: layer il is local (swa) when il % period < period - 1, so
  // every period-th layer is global; every layer is local when period is 0.
  void set_swa_period(uint32_t period);
  // F32 floats of one sequence's recurrent state in one recurrent layer, as llama.cpp sizes them
  // (llama_hparams::n_embd_r / n_embd_s): the conv's last d_conv - 1 inputs of every channel
  // (x, B and C for Mamba-2; q, k and v for a gated delta net), then the scan state.
  uint64_t conv_channels() const { return uint64_t(d_inner) + 2ull * n_group * d_state; }
  uint64_t conv_state_floats() const { return d_conv ? uint64_t(d_conv - 1) * conv_channels() : 0; }
  uint64_t ssm_state_floats() const { return uint64_t(d_state) * d_inner; }
};

// Reads the keys llama.cpp's loader reads for the file's architecture. Throws naming the file
// and the key: a missing or malformed key, or a value that changes the math in a way this
// engine does not implement (see core/model/ARCH-KEYS.md for the rule).
ModelDesc read_model_desc(const gguf::File& file);

}  // namespace sy::model
