// The 2026 families' shapes: tiny ones that put every layer kind and optional path of a family
// in a few layers (tests), and real models' proportions (layer pattern, head counts, expert
// counts, state sizes) from their published configs, to write at full size or scaled down with
// scale_shape (`mkmodel --scale`).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "modelgen/generator_detail.h"
#include "switchyard/common/error.h"

namespace sy::model {
namespace detail {
namespace {

// A tiny shape of `arch`: n_embd 64, a 259-token byte vocabulary.
ModelShape tiny(const char* arch, uint32_t layers) {
  ModelShape s;
  s.arch = arch;
  s.n_vocab = 259, s.n_ctx = 512, s.n_embd = 64, s.n_layer = layers;
  s.n_head = 4, s.n_head_kv = 2;
  return s;
}

// Mamba-2 sizes: d_inner channels in `heads` heads, `groups` groups of B and C.
void mamba2(ModelShape& s, uint32_t d_inner, uint32_t heads, uint32_t state, uint32_t groups) {
  s.ssm_d_inner = d_inner, s.ssm_dt_rank = heads, s.ssm_d_state = state, s.ssm_n_group = groups;
  s.ssm_d_conv = 4;
}

// Gated delta net sizes: value heads, key heads, head size.
void gdn(ModelShape& s, uint32_t v_heads, uint32_t k_heads, uint32_t head) {
  s.ssm_dt_rank = v_heads, s.ssm_n_group = k_heads, s.ssm_d_state = head;
  s.ssm_d_inner = v_heads * head, s.ssm_d_conv = 4;
}

// Attention every `interval`-th layer (Qwen3.5's full_attention_interval).
void every(ModelShape& s, uint32_t interval) {
  s.attn_layer_offset = interval - 1, s.attn_layer_period = interval;
}

void experts(ModelShape& s, uint32_t n, uint32_t used, uint32_t ff, uint32_t shared) {
  s.n_expert = n, s.n_expert_used = used, s.n_ff_exp = ff, s.n_ff_shexp = shared;
}

bool tiny_preset(const std::string& name, ModelShape& s) {
  if (name == "mamba2-tiny") {
    s = tiny("mamba2", 2);
    s.n_ff = 0, s.n_head = s.n_head_kv = 0;
    mamba2(s, 128, 4, 16, 2);
  } else if (name == "granitehybrid-tiny") {
    // M+MoE, A+MoE, M+MoE, A+MoE with a shared expert; every Granite multiplier; no RoPE (as
    // Granite 4.0-H files).
    s = tiny("granitehybrid", 4);
    s.attn_layer_offset = 1, s.attn_layer_period = 2;
    mamba2(s, 128, 4, 16, 1);
    s.n_ff = 64;
    experts(s, 4, 2, 64, 32);
    s.rope = false;
    s.embedding_scale = 2.0f, s.residual_scale = 0.5f, s.logit_scale = 4.0f;
    s.attention_scale = 0.125f;
  } else if (name == "nemotron-h-tiny") {
    // Mamba-2, attention, Mamba-2, MoE (latent, shared expert), Mamba-2, MoE. With experts,
    // every FFN block of the file is MoE (llama.cpp's loader).
    s = tiny("nemotron_h_moe", 6);
    s.layer_pattern = "M*MEME";
    mamba2(s, 128, 4, 16, 2);
    s.n_ff = 96;
    experts(s, 4, 2, 48, 64);
    s.moe_latent = 32, s.expert_weights_scale = 2.5f;
  } else if (name == "nemotron-h-dense-tiny") {
    // Mamba-2, attention, squared-ReLU FFN, Mamba-2 (Nemotron-H 9B/12B v2's kinds).
    s = tiny("nemotron_h", 4);
    s.layer_pattern = "M*-M";
    mamba2(s, 128, 4, 16, 2);
    s.n_ff = 96;
  } else if (name == "falcon-h1-tiny") {
    s = tiny("falcon-h1", 2);
    mamba2(s, 96, 3, 16, 1);  // d_inner need not be 2 * n_embd here
    s.n_ff = 128;
  } else if (name == "lfm2-tiny") {
    s = tiny("lfm2", 4);  // C, A, C, A; the window 8 acts on the tests' longer prompts
    s.attn_layer_offset = 1, s.attn_layer_period = 2;
    s.ssm_d_conv = 3, s.n_ff = 128, s.window = 8;
  } else if (name == "lfm2moe-tiny") {
    s = tiny("lfm2moe", 4);  // layer 0 dense, the rest MoE with sigmoid routing
    s.attn_layer_offset = 1, s.attn_layer_period = 2;
    s.ssm_d_conv = 3, s.n_ff = 128;
    experts(s, 4, 2, 48, 0);
    s.expert_layer_offset = 1, s.expert_layer_period = 1, s.moe_sigmoid = true;
  } else if (name == "qwen35-tiny" || name == "qwen35moe-tiny" || name == "qwen3next-tiny") {
    // G, G, G, A: head size 32 (q width 128 != n_embd), a quarter of it rotated; 4 value heads
    // on 2 key heads.
    s = tiny(name == "qwen35-tiny"      ? "qwen35"
             : name == "qwen3next-tiny" ? "qwen3next"
                                        : "qwen35moe",
             4);
    every(s, 4);
    s.head_dim = 32, s.n_rot = 8;
    gdn(s, 4, 2, 16);
    s.n_ff = 128;
    if (name != "qwen35-tiny") experts(s, 4, 2, 32, 48);
  } else if (name == "qwen3-tiny" || name == "qwen3moe-tiny") {
    s = tiny(name == "qwen3-tiny" ? "qwen3" : "qwen3moe", 2);
    s.head_dim = 32, s.n_ff = 128;
    if (name == "qwen3moe-tiny") experts(s, 4, 2, 64, 0);
  } else if (name == "qwen2-tiny" || name == "qwen2moe-tiny") {
    s = tiny(name == "qwen2-tiny" ? "qwen2" : "qwen2moe", 2);
    s.n_ff = 128;
    if (name == "qwen2moe-tiny") experts(s, 4, 2, 64, 96);
  } else if (name == "mistral3-tiny" || name == "mistral3moe-tiny") {
    // Head size 32 (q width 128 != n_embd); temperature tuning floored every 8 positions, so
    // the tests' prompts cross floors.
    s = tiny("mistral3", 2);
    s.head_dim = 32, s.n_ff = 128;
    s.attn_temp_scale = 0.1f, s.attn_temp_floor = 8;
    if (name == "mistral3moe-tiny") experts(s, 4, 2, 0, 0);
  } else if (name == "granite-tiny" || name == "granitemoe-tiny") {
    s = tiny(name == "granite-tiny" ? "granite" : "granitemoe", 2);
    s.n_ff = 128;
    s.embedding_scale = 2.0f, s.residual_scale = 0.5f, s.logit_scale = 4.0f;
    s.attention_scale = 0.125f;
    if (name == "granitemoe-tiny") experts(s, 4, 2, 0, 32);
  } else if (name == "phi3-tiny") {
    s = tiny("phi3", 2);
    s.n_rot = 8, s.n_ff = 128;  // partial rotary (Phi-4-mini rotates 3/4 of each head)
  } else if (name == "gemma2-tiny") {
    // Local, global, local (Gemma 2's period), a window shorter than the test prompts, a
    // local RoPE base of its own, and attention soft-capped low enough that the tiny model's
    // scores bend (Gemma 2 ships 50).
    s = tiny("gemma2", 3);
    s.head_dim = 24, s.n_ff = 128, s.tied_output = true;
    s.window = 8;
    s.rope_freq_base_swa = 100000.0f;
    s.attn_softcap = 0.5f, s.logit_softcap = 30.0f;
  } else if (name == "gemma3-tiny") {
    // Local, global, local: a window shorter than the test prompts, Gemma 3's two RoPE bases,
    // a head size of its own, and soft-capping (Gemma 2's; llama.cpp applies it when set).
    s = tiny("gemma3", 3);
    s.head_dim = 24, s.n_ff = 128, s.tied_output = true;
    s.window = 8, s.window_period = 2;
    s.rope_freq_base = 1000000.0f, s.rope_freq_base_swa = 10000.0f;
    s.logit_softcap = 30.0f;
  } else if (name == "gemma4-tiny" || name == "gemma4moe-tiny" || name == "gemma4e-tiny") {
    // Local, global, local: the local layers' heads half the global's, one KV head on the
    // global layer, V from K's projection (the writer leaves attn_v out), soft-capping. The MoE
    // one has Gemma 4 26B-A4B's layers: the dense FFN beside 4 experts, 2 used. The "e" one has
    // E2B/E4B's: per-layer inputs of 32 values, five layers (local, global, local, global,
    // local) of which the last three read layer 1's (global) or 0's (local) KV.
    s = tiny("gemma4", name == "gemma4e-tiny" ? 5 : 3);
    s.head_dim = 32, s.head_dim_swa = 16, s.n_head_kv_global = 1, s.n_ff = 128;
    s.tied_output = true;
    s.window = 8, s.window_period = 2;
    s.rope_freq_base = 1000000.0f, s.rope_freq_base_swa = 10000.0f;
    s.logit_softcap = 30.0f;
    if (name == "gemma4moe-tiny") experts(s, 4, 2, 64, 0);
    if (name == "gemma4e-tiny") s.n_embd_per_layer = 32, s.kv_shared_layers = 3;
  } else if (name == "gpt-oss-tiny") {
    // Local, global, local: every layer MoE (4 experts, 2 used), a window shorter than the
    // prompts, a head size of its own (gpt-oss: 64 with 64 query heads of 2880 wide).
    s = tiny("gpt-oss", 3);
    s.head_dim = 32, s.n_head = 4, s.n_head_kv = 2, s.n_ff = 64;
    s.window = 8;
    experts(s, 4, 2, 64, 0);
  } else {
    return false;
  }
  return true;
}

// bench-hybrid's and the main job's pairs of equal total parameters at ~20M (memory-bound on a
// CPU, an 8k prefill in seconds): a Qwen3-shaped dense model against a Qwen3.5-MoE-shaped hybrid
// (3 gated delta nets to 1 gated attention layer, value heads twice the key heads, experts a
// quarter of n_embd wide with a shared one), and dense-20m against a Nemotron-H-shaped one.
bool pair_preset(const std::string& name, ModelShape& s) {
  s = ModelShape{};
  s.n_vocab = 4096, s.n_ctx = 16384, s.n_embd = 512, s.n_layer = 8, s.tied_output = true;
  if (name == "qwen3-20m") {
    s.arch = "qwen3";
    s.n_head = 4, s.n_head_kv = 2, s.head_dim = 128, s.n_ff = 1280;
  } else if (name == "qwen35moe-20m") {
    s.arch = "qwen35moe";
    every(s, 4);
    s.n_head = 4, s.n_head_kv = 1, s.head_dim = 128, s.n_rot = 32;
    gdn(s, 4, 2, 128);
    s.n_ff = 64;
    experts(s, 16, 2, 64, 128);
  } else if (name == "nemotron-h-20m") {
    s.arch = "nemotron_h_moe";
    s.layer_pattern = "MEMEM*EM";  // Nemotron-3-Nano's first eight blocks
    s.n_head = 8, s.n_head_kv = 2, s.head_dim = 64;
    mamba2(s, 1024, 16, 64, 2);
    s.n_ff = 224;
    experts(s, 16, 2, 224, 192);
    s.expert_weights_scale = 2.5f;
  } else {
    return false;
  }
  return true;
}

// Real models' proportions (their config.json / GGUF metadata).
bool real_preset(const std::string& name, ModelShape& s) {
  s = ModelShape{};
  if (name == "llama-3.2-1b-shape") {
    // Llama 3.2 1B: 128k vocabulary, 16 layers, tied output.
    s.arch = "llama";
    s.n_vocab = 128256, s.n_ctx = 131072, s.n_embd = 2048, s.n_layer = 16, s.n_ff = 8192;
    s.n_head = 32, s.n_head_kv = 8, s.rope_freq_base = 5e5f, s.tied_output = true;
  } else if (name == "llama-3.2-3b-shape") {
    // Llama 3.2 3B: 28 layers of 3072, head size 128, tied output.
    s.arch = "llama";
    s.n_vocab = 128256, s.n_ctx = 131072, s.n_embd = 3072, s.n_layer = 28, s.n_ff = 8192;
    s.n_head = 24, s.n_head_kv = 8, s.rope_freq_base = 5e5f, s.tied_output = true;
  } else if (name == "llama-3.1-8b-shape") {
    // Llama 3.1 8B: 32 layers of 4096, its own output matrix.
    s.arch = "llama";
    s.n_vocab = 128256, s.n_ctx = 131072, s.n_embd = 4096, s.n_layer = 32, s.n_ff = 14336;
    s.n_head = 32, s.n_head_kv = 8, s.rope_freq_base = 5e5f;
  } else if (name == "qwen3-8b-shape") {
    s.arch = "qwen3";
    s.n_vocab = 151936, s.n_ctx = 40960, s.n_embd = 4096, s.n_layer = 36, s.n_ff = 12288;
    s.n_head = 32, s.n_head_kv = 8, s.head_dim = 128, s.rope_freq_base = 1e6f, s.rms_eps = 1e-6f;
  } else if (name == "qwen3-30b-a3b-shape") {
    s.arch = "qwen3moe";
    s.n_vocab = 151936, s.n_ctx = 40960, s.n_embd = 2048, s.n_layer = 48, s.n_ff = 6144;
    s.n_head = 32, s.n_head_kv = 4, s.head_dim = 128, s.rope_freq_base = 1e6f, s.rms_eps = 1e-6f;
    experts(s, 128, 8, 768, 0);
  } else if (name == "qwen35moe-35b-a3b-shape") {
    // 30 gated delta nets + 10 gated attention layers; 256 experts, top 8, and a shared one.
    s.arch = "qwen35moe";
    s.n_vocab = 248320, s.n_ctx = 262144, s.n_embd = 2048, s.n_layer = 40, s.n_ff = 512;
    s.n_head = 16, s.n_head_kv = 2, s.head_dim = 256, s.n_rot = 64, s.rope_freq_base = 1e7f;
    s.rms_eps = 1e-6f;
    every(s, 4);
    gdn(s, 32, 16, 128);
    experts(s, 256, 8, 512, 512);
  } else if (name == "nemotron-3-nano-30b-a3b-shape") {
    // 23 Mamba-2, 23 MoE and 6 attention blocks; 128 experts top 6 and a shared one.
    s.arch = "nemotron_h_moe";
    s.n_vocab = 131072, s.n_ctx = 262144, s.n_embd = 2688, s.n_layer = 52, s.n_ff = 1856;
    s.layer_pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
    s.n_head = 32, s.n_head_kv = 2, s.head_dim = 128;
    mamba2(s, 4096, 64, 128, 8);
    experts(s, 128, 6, 1856, 3712);
    s.expert_weights_scale = 2.5f;
  } else if (name == "granite-4.0-h-tiny-shape") {
    // 40 layers, attention in 4 of them; 64 experts top 6 and a shared one.
    s.arch = "granitehybrid";
    s.n_vocab = 100352, s.n_ctx = 131072, s.n_embd = 1536, s.n_layer = 40, s.n_ff = 512;
    s.n_head = 12, s.n_head_kv = 4;
    s.attn_layer_offset = 5, s.attn_layer_period = 10;
    mamba2(s, 3072, 48, 128, 1);
    experts(s, 64, 6, 512, 1024);
    s.rope = false;
    s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 6.0f;
    s.attention_scale = 0.015625f;
  } else if (name == "gemma-3-4b-shape") {
    // 34 layers, every sixth global; the others see 1024 positions. 262k vocabulary, tied.
    s.arch = "gemma3";
    s.n_vocab = 262208, s.n_ctx = 131072, s.n_embd = 2560, s.n_layer = 34, s.n_ff = 10240;
    s.n_head = 8, s.n_head_kv = 4, s.head_dim = 256, s.rms_eps = 1e-6f, s.tied_output = true;
    s.window = 1024, s.window_period = 6;
    s.rope_freq_base = 1e6f, s.rope_freq_base_swa = 1e4f;
  } else if (name == "lfm2-1.2b-shape") {
    // 10 short convolutions and 6 attention layers.
    s.arch = "lfm2";
    s.n_vocab = 65536, s.n_ctx = 128000, s.n_embd = 2048, s.n_layer = 16, s.n_ff = 8192;
    s.n_head = 32, s.n_head_kv = 8, s.ssm_d_conv = 3, s.rope_freq_base = 1e6f;
    s.attn_layer_offset = 2, s.attn_layer_period = 3;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool family_preset(const std::string& name, ModelShape& out) {
  ModelShape s;
  if (!tiny_preset(name, s) && !pair_preset(name, s) && !real_preset(name, s)) return false;
  out = s;
  return true;
}

std::vector<std::string> family_preset_names() {
  return {"mamba2-tiny",
          "granitehybrid-tiny",
          "nemotron-h-tiny",
          "nemotron-h-dense-tiny",
          "falcon-h1-tiny",
          "lfm2-tiny",
          "lfm2moe-tiny",
          "qwen35-tiny",
          "qwen35moe-tiny",
          "qwen3next-tiny",
          "qwen3-tiny",
          "qwen3moe-tiny",
          "qwen2-tiny",
          "qwen2moe-tiny",
          "mistral3-tiny",
          "mistral3moe-tiny",
          "granite-tiny",
          "granitemoe-tiny",
          "phi3-tiny",
          "gemma2-tiny",
          "gemma3-tiny",
          "gpt-oss-tiny",
          "gemma4-tiny",
          "gemma4moe-tiny",
          "gemma4e-tiny",
          "qwen3-20m",
          "qwen35moe-20m",
          "nemotron-h-20m",
          "llama-3.2-1b-shape",
          "llama-3.2-3b-shape",
          "llama-3.1-8b-shape",
          "qwen3-8b-shape",
          "qwen3-30b-a3b-shape",
          "qwen35moe-35b-a3b-shape",
          "nemotron-3-nano-30b-a3b-shape",
          "granite-4.0-h-tiny-shape",
          "lfm2-1.2b-shape",
          "gemma-3-4b-shape"};
}

}  // namespace detail

namespace {

uint32_t scaled(uint32_t v, double f, uint32_t multiple) {
  if (v == 0) return 0;
  const double x = std::max(1.0, std::round(v * f / multiple));
  return static_cast<uint32_t>(x) * multiple;
}

}  // namespace

ModelShape scale_shape(ModelShape s, double f) {
  if (!(f > 0.0) || f > 1.0) throw sy::Error("scale must be in (0, 1]");
  if (f == 1.0) return s;
  // Widths shrink with f, in whole 32-value blocks; head counts shrink (the head size stays),
  // keeping their ratios; layers, experts and the vocabulary stay.
  s.n_embd = scaled(s.n_embd, f, 64);
  s.n_ff = scaled(s.n_ff, f, 32);
  s.n_ff_exp = scaled(s.n_ff_exp, f, 32);
  s.n_ff_shexp = scaled(s.n_ff_shexp, f, 32);
  s.moe_latent = scaled(s.moe_latent, f, 32);
  if (s.n_head) {
    const uint32_t group = s.n_head / std::max(1u, s.n_head_kv);
    const uint32_t head = s.attn_head_dim() ? s.attn_head_dim() : 64;
    s.n_head_kv = std::max(1u, static_cast<uint32_t>(std::lround(s.n_head_kv * f)));
    s.n_head = s.n_head_kv * group;
    s.head_dim = head;
    if (s.arch == "lfm2" || s.arch == "lfm2moe") s.n_embd = s.n_head * head;  // q width = n_embd
  }
  if (s.ssm_d_inner && s.ssm_dt_rank) {
    // Mamba-2 / gated delta net heads: the head size stays, the groups keep dividing the heads.
    const uint32_t head = s.ssm_d_inner / s.ssm_dt_rank;
    const uint32_t per_group = s.ssm_dt_rank / std::max(1u, s.ssm_n_group);
    s.ssm_n_group = std::max(1u, static_cast<uint32_t>(std::lround(s.ssm_n_group * f)));
    s.ssm_dt_rank = s.ssm_n_group * per_group;
    s.ssm_d_inner = s.ssm_dt_rank * head;
  }
  return s;
}

}  // namespace sy::model
