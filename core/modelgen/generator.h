// Writes random-weight GGUF models of any shape, deterministic from a seed, with llama.cpp's
// keys, tensor names and a byte-level "llama" vocabulary, so other GGUF engines load them too:
// every architecture the decoder runs (model/arch/), e.g. `llama` (dense or Mixtral-style MoE),
// `mamba`, `jamba` (see model/JAMBA-GGUF.md), `qwen3`, `qwen35moe`, `nemotron_h_moe`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sy::model {

struct ModelShape {
  std::string arch = "llama";
  uint32_t n_vocab = 259;
  // A GGUF file (a model or one of llama.cpp's ggml-vocab-*.gguf) whose tokenizer the model takes:
  // every tokenizer.* key, so that text tokenizes as with the real model; n_vocab must be its
  // token count (vocab_size). Empty: the byte-level vocabulary.
  std::string vocab;
  uint32_t n_ctx = 512;
  uint32_t n_embd = 64;
  uint32_t n_layer = 2;
  uint32_t n_ff = 128;
  uint32_t n_head = 4;
  uint32_t n_head_kv = 2;
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_output = false;
  // MoE: llama puts it in every layer, jamba in the layers expert_layer_offset + i * period.
  uint32_t n_expert = 0;  // 0: dense FFN
  uint32_t n_expert_used = 0;
  // SSM (mamba, jamba); d_inner is 2 * n_embd as llama.cpp requires.
  uint32_t ssm_d_conv = 4;
  uint32_t ssm_d_state = 16;
  uint32_t ssm_dt_rank = 0;  // 0: ceil(n_embd / 16), the converters' default
  // jamba's layer pattern, as in the HF config: attention at layers offset + i * period, the
  // rest Mamba; MoE FFN at expert_layer_offset + i * expert_layer_period, the rest dense.
  uint32_t attn_layer_offset = 0;
  uint32_t attn_layer_period = 1;
  uint32_t expert_layer_offset = 1;
  uint32_t expert_layer_period = 2;

  // The 2026 families (0: the default named). Attention: the head size (n_embd / n_head) and
  // the rotated dims (the head size); a sliding window (lfm2); Granite's multipliers.
  uint32_t head_dim = 0;
  uint32_t n_rot = 0;
  uint32_t window = 0;
  // Gemma 3: with a window, every window_period-th layer is global (0: 6, llama.cpp's default),
  // the others local with RoPE base rope_freq_base_swa (0: 10000); final-logit soft-capping.
  uint32_t window_period = 0;
  float rope_freq_base_swa = 0.0f;
  float logit_softcap = 0.0f;
  // Gemma 2: attention scores soft-capped at this (0: 50, its default; final logits at
  // logit_softcap, 0: 30), window 0: 4096, window_period 0: 2.
  float attn_softcap = 0.0f;
  // Gemma 4: the local layers' head size (0: head_dim) and the global layers' KV heads
  // (0: n_head_kv).
  uint32_t head_dim_swa = 0;
  uint32_t n_head_kv_global = 0;
  // Gemma 4 E2B/E4B: per-layer input embeddings of this width (0: none), and the last
  // kv_shared_layers layers reading an earlier layer's KV cache.
  uint32_t n_embd_per_layer = 0;
  uint32_t kv_shared_layers = 0;
  bool rope = true;  // granitehybrid: false writes rope.scaling.finetuned = false (NoPE)
  float embedding_scale = 0.0f, residual_scale = 0.0f, logit_scale = 0.0f, attention_scale = 0.0f;
  // Mistral 3's attention temperature tuning of q (0: off), floored every attn_temp_floor
  // positions (rope.scaling.original_context_length).
  float attn_temp_scale = 0.0f;
  uint32_t attn_temp_floor = 0;
  // Recurrent layers. Mamba-2: ssm_d_inner channels (2 * n_embd), ssm_dt_rank heads,
  // ssm_n_group groups of B and C, ssm_d_state. Gated delta net: ssm_dt_rank value heads,
  // ssm_n_group key heads, ssm_d_state the head size (ssm_d_inner = value heads * head size).
  // Short convolution: ssm_d_conv taps.
  uint32_t ssm_d_inner = 0;
  uint32_t ssm_n_group = 1;
  // MoE: the experts' width (n_ff), the shared expert's (0: none), Nemotron's latent size.
  uint32_t n_ff_exp = 0;
  uint32_t n_ff_shexp = 0;
  uint32_t moe_latent = 0;
  bool moe_sigmoid = false;           // lfm2moe: sigmoid routing (nemotron always, others never)
  float expert_weights_scale = 0.0f;  // nemotron's routing weights' multiplier (0: 1)
  // Nemotron-H's hybrid_override_pattern, one character per layer, repeated: M Mamba-2,
  // * attention, - an FFN block, E an MoE block.
  std::string layer_pattern;

  uint32_t d_inner() const;
  uint32_t dt_rank() const { return ssm_dt_rank ? ssm_dt_rank : (n_embd + 15) / 16; }
  bool is_attention_layer(uint32_t l) const;  // llama: all; mamba: none; jamba: the pattern
  bool is_moe_layer(uint32_t l) const;        // n_expert > 0 and (llama: all; jamba: pattern)
  uint32_t attn_head_dim() const { return head_dim ? head_dim : (n_head ? n_embd / n_head : 0); }
};

// The architectures the writer writes, "llama, mamba, ...", and whether `arch` is one.
std::string generated_archs();
bool is_generated_arch(const std::string& arch);

// Named shapes: dense-tiny (tests), dense-small (the embedded default), dense-100m (benchmarks);
// hybrid-tiny, mamba-tiny, moe-tiny (tests); hybrid-small (total parameters of dense-small),
// hybrid-small-active (active parameters of dense-small); dense-20m and hybrid-20m (equal
// totals, for bench-hybrid). Throws std::invalid_argument listing the known names.
// The 2026 families: <family>-tiny for each (every layer kind in a few layers, for tests), and
// real models' proportions: qwen3-8b-shape, qwen3-30b-a3b-shape, qwen35moe-35b-a3b-shape,
// nemotron-3-nano-30b-a3b-shape, granite-4.0-h-tiny-shape, lfm2-1.2b-shape.
ModelShape preset_shape(const std::string& name);
std::vector<std::string> preset_names();
// The shape with its widths and head counts times f in (0, 1] (head sizes, layers, experts and
// vocabulary kept): a real model's proportions at a size this machine runs.
ModelShape scale_shape(ModelShape s, double f);

// dtype: a llama.cpp file type in lower case (dtype::kFileTypes: f32, f16, bf16, q4_0, q4_1,
// q5_0, q5_1, q8_0, q2_k, q3_k_s/m/l, q4_k_s/m, q5_k_s/m, q6_k, iq4_nl, iq4_xs) for the matrices,
// each matrix typed and quantised as llama-quantize would (modelgen/quant_mix.h); norms, biases,
// ssm_conv1d, ssm_a, ssm_d and the MoE router stay F32 as in llama.cpp. The keys and tensors are
// the architecture descriptor's (model/arch/): what its loader reads, its table in file order.
// pure: llama-quantize's --pure (every quantized matrix in the file type's base type).
// (write_random_llama is the older name of the same function.)
void write_random_model(const ModelShape& shape, const std::string& dtype, uint64_t seed,
                        const std::filesystem::path& path, bool pure = false);
inline void write_random_llama(const ModelShape& shape, const std::string& dtype, uint64_t seed,
                               const std::filesystem::path& path) {
  write_random_model(shape, dtype, seed, path);
}

// The number of tokens in a GGUF file's tokenizer.ggml.tokens; throws naming the file.
uint32_t vocab_size(const std::filesystem::path& path);

uint64_t count_params(const ModelShape& shape);
// The description the shape stands for: the file the writer writes for it reads back as this.
// Throws std::invalid_argument naming what is wrong with the shape.
struct ModelDesc;
ModelDesc describe_shape(const ModelShape& shape);
// Parameters one token uses: every tensor except the unselected experts (the embedding table
// counts whole, as in count_params).
uint64_t count_active_params(const ModelShape& shape);

}  // namespace sy::model
