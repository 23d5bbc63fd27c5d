#include "modelgen/quant_mix.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "modelgen/generator_detail.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"

namespace sy::model {
namespace {

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// The layer of "blk.N.*", or -1.
int layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  return std::atoi(name.c_str() + 4);
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool use_more_bits(int i, int n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// Families whose converters write head_count_kv per layer with 0 at the layers without
// attention, so llama.cpp's n_gqa() (layer 0) is 0 when layer 0 has none.
bool per_layer_heads(const std::string& arch) {
  for (const char* a :
       {"jamba", "granitehybrid", "nemotron_h", "nemotron_h_moe", "lfm2", "lfm2moe"})
    if (arch == a) return true;
  return false;
}

}  // namespace

QuantMix::QuantMix(const dtype::FileType& ftype, const ModelShape& shape, bool pure)
    : QuantMix(ftype, detail::describe(shape), pure) {}

QuantMix::QuantMix(const dtype::FileType& ftype, const ModelDesc& d, bool pure)
    : ftype_(ftype), d_(d), pure_(pure) {
  const bool heads0 = d.n_layer > 0 && (!per_layer_heads(d.arch) || d.layers[0].has_attention());
  n_gqa_ = heads0 && d.n_head_kv ? d.n_head / d.n_head_kv : 0;
  int v = 0, down = 0;
  for (const LayerSpec& s : d.layers) {
    attn_v_before_.push_back(v);
    ffn_down_before_.push_back(down);
    // attn_v or a fused attn_qkv in attention layers; a gated delta net's attn_qkv.
    v += s.has_attention() || s.mixer == Mixer::gdn;
    down += s.ffn == FfnKind::dense;
  }
  n_attn_v_ = v;
}

bool QuantMix::is(const char* ftype_name) const {
  return std::strcmp(ftype_.name, ftype_name) == 0;
}

uint32_t QuantMix::chosen(const std::string& name, int64_t ne0) const {
  const uint32_t base = ftype_.base;
  const int layer = layer_of(name);
  const bool has_output = !d_.tied_output;
  const uint32_t n_expert = d_.n_expert;
  if (is("MXFP4_MOE")) {  // experts MXFP4, every other matrix Q8_0 (the output too)
    const bool experts = contains(name, "_exps.weight");
    return experts ? (uint32_t)SY_DTYPE_MXFP4 : (uint32_t)SY_DTYPE_Q8_0;
  }
  // llama-quantize's token-embedding category includes Gemma 4's per-layer table.
  const bool embd = name == "token_embd.weight" || name == "per_layer_token_embd.weight";
  if (name == "output.weight" || (!has_output && embd)) {
    if (ne0 % dtype::block_elems(base)) return SY_DTYPE_Q8_0;
    return base == SY_DTYPE_Q8_0 ? base : (uint32_t)SY_DTYPE_Q6_K;
  }
  if (embd) return base;
  if (contains(name, "attn_v.weight") || contains(name, "attn_qkv.weight")) {
    const int i = layer >= 0 && layer < (int)attn_v_before_.size() ? attn_v_before_[layer] : 0;
    const int n = n_attn_v_;
    uint32_t t = base;
    if (is("Q2_K"))
      t = n_gqa_ >= 4 ? SY_DTYPE_Q4_K : SY_DTYPE_Q3_K;
    else if (is("Q3_K_M"))
      t = i < 2 ? SY_DTYPE_Q5_K : SY_DTYPE_Q4_K;
    else if (is("Q3_K_L"))
      t = SY_DTYPE_Q5_K;
    else if ((is("IQ4_NL") || is("IQ4_XS")) && n_gqa_ >= 4)
      t = SY_DTYPE_Q5_K;
    else if ((is("Q4_K_M") || is("Q5_K_M")) && use_more_bits(i, n))
      t = SY_DTYPE_Q6_K;
    else if (is("Q4_K_S") && i < 4)
      t = SY_DTYPE_Q5_K;
    return n_expert == 8 ? (uint32_t)SY_DTYPE_Q8_0 : t;
  }
  if (contains(name, "attn_k.weight")) return n_expert == 8 ? (uint32_t)SY_DTYPE_Q8_0 : base;
  if (contains(name, "ffn_down")) {  // ffn_down, ffn_down_exps, ffn_down_shexp
    // An MoE model's layer comes from the name; a dense model counts its ffn_down tensors.
    const int i = n_expert > 1 || layer < 0 || layer >= (int)ffn_down_before_.size()
                      ? layer
                      : ffn_down_before_[layer];
    const int n = static_cast<int>(d_.n_layer);
    if (is("Q2_K")) return SY_DTYPE_Q3_K;
    if (is("Q3_K_M")) return i < n / 16 ? SY_DTYPE_Q5_K : SY_DTYPE_Q4_K;
    if (is("Q3_K_L")) return SY_DTYPE_Q5_K;
    if (is("Q4_K_M")) return use_more_bits(i, n) ? (uint32_t)SY_DTYPE_Q6_K : base;
    if (i < n / 8 && (is("IQ4_NL") || is("IQ4_XS"))) return SY_DTYPE_Q5_K;
    if (is("Q5_K_M") && use_more_bits(i, n)) return SY_DTYPE_Q6_K;
    if (is("Q4_K_S") && i < n / 8) return SY_DTYPE_Q5_K;
    return base;
  }
  if (contains(name, "attn_output.weight")) {
    if (n_expert == 8)
      return is("Q2_K") || is("Q3_K_S") || is("Q3_K_M") || is("IQ4_NL") || is("Q4_K_S") ||
                     is("Q4_K_M") || is("IQ4_XS")
                 ? (uint32_t)SY_DTYPE_Q5_K
                 : base;
    if (is("Q2_K")) return SY_DTYPE_Q3_K;
    if (is("Q3_K_M")) return SY_DTYPE_Q4_K;
    if (is("Q3_K_L")) return SY_DTYPE_Q5_K;
  }
  return base;
}

uint32_t QuantMix::type_for(const std::string& name, int64_t ne0) const {
  if (dtype::block_elems(ftype_.base) == 1) return ftype_.base;  // F32, F16, BF16: no mixing
  if (pure_) {
    if (ne0 % dtype::block_elems(ftype_.base))
      throw sy::Error("--pure: " + name + " has rows of " + std::to_string(ne0) +
                      " values, not whole blocks of " + dtype::name(ftype_.base) + " (" +
                      std::to_string(dtype::block_elems(ftype_.base)) + ")");
    return ftype_.base;
  }
  uint32_t t = chosen(name, ne0);
  if (ne0 % dtype::block_elems(t) == 0) return t;
  // llama-quantize's fallback for rows that are not whole super-blocks.
  switch (t) {
    case SY_DTYPE_Q2_K:  // llama.cpp since #19770; IQ4_NL before
    case SY_DTYPE_Q3_K:
      t = SY_DTYPE_Q4_0;
      break;
    case SY_DTYPE_IQ4_XS:
      t = SY_DTYPE_IQ4_NL;
      break;
    case SY_DTYPE_Q4_K:
      t = SY_DTYPE_Q5_0;
      break;
    case SY_DTYPE_Q5_K:
      t = SY_DTYPE_Q5_1;
      break;
    case SY_DTYPE_Q6_K:
      t = SY_DTYPE_Q8_0;
      break;
    default:
      throw sy::Error(std::string(dtype::name(t)) + " needs rows of whole " +
                      std::to_string(dtype::block_elems(t)) + "-value blocks but " + name +
                      " has ne[0] = " + std::to_string(ne0));
  }
  return ne0 % dtype::block_elems(t) == 0 ? t : (uint32_t)SY_DTYPE_F16;
}

}  // namespace sy::model
