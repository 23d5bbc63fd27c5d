#include "model/arch/arch.h"

#include <algorithm>

#include "model/arch/families.h"
#include "model/blocks/ops.h"

namespace sy::model {
namespace {

// Every family, in the order `supported_archs` names them.
const Arch* const* archs(size_t& n) {
  static const Arch* const kArchs[] = {
      &llama_arch(),         &mamba_arch(),      &jamba_arch(),          &mamba2_arch(),
      &granitehybrid_arch(), &nemotron_h_arch(), &nemotron_h_moe_arch(), &falcon_h1_arch(),
      &lfm2_arch(),          &lfm2moe_arch(),    &qwen35_arch(),         &qwen35moe_arch(),
      &qwen3next_arch(),     &qwen3_arch(),      &qwen3moe_arch(),       &qwen2_arch(),
      &qwen2moe_arch(),      &mistral3_arch(),   &granite_arch(),        &granitemoe_arch(),
      &phi3_arch(),          &gemma2_arch(),     &gemma3_arch(),         &gpt_oss_arch(),
      &gemma4_arch()};
  n = std::size(kArchs);
  return kArchs;
}

}  // namespace

const Arch* find_arch(std::string_view name) {
  size_t n = 0;
  const Arch* const* all = archs(n);
  for (size_t i = 0; i < n; ++i)
    if (all[i]->name() == name) return all[i];
  return nullptr;
}

std::string supported_archs() {
  size_t n = 0;
  const Arch* const* all = archs(n);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::string(all[i]->name());
  return s;
}

void global_tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w, names::Tensor norm) {
  const int64_t E = d.n_embd, V = d.n_vocab;
  w.tok_embd = &t.matrix(names::tensor(names::Tensor::token_embd), {E, V}, {Init::embedding, 0});
  w.out_norm = &t.norm(names::tensor(norm), E);
  w.output = d.tied_output ? *w.tok_embd
                           : t.packed(t.matrix(names::tensor(names::Tensor::output), {E, V}));
}

const sy_tensor* layer_norm(TensorTable& t, const ModelDesc& d, names::Tensor which, uint32_t il) {
  return &t.norm(names::tensor(which, il), d.n_embd);
}

void LayerOrdinals::assign(LayerWeights& w) {
  if (w.spec.has_attention()) w.attn.cache_layer = attn++;
  w.attn.swa = w.spec.swa;
  if (w.spec.has_state()) {
    w.ssm.state_layer = w.ssm2.state_layer = w.gdn.state_layer = w.conv.state_layer = state;
    ++state;
  }
  if (w.spec.ffn == FfnKind::moe) w.moe.moe_index = moe++;
}

void run_mixer(LayerPass& p, const LayerWeights& w, const sy_tensor& xn, const sy_tensor& out) {
  switch (w.spec.mixer) {
    case Mixer::attention:
      return attention(p, w.attn, xn, out);
    case Mixer::ssm:
      return mamba(p, w.ssm, xn, out);
    case Mixer::ssm2:
      return mamba2(p, w.ssm2, xn, out);
    case Mixer::gdn:
      return gated_delta_net(p, w.gdn, xn, out);
    case Mixer::shortconv:
      return shortconv(p, w.conv, xn, out);
    case Mixer::parallel: {  // attention and Mamba-2 of the same input, summed (Falcon-H1)
      const sy_tensor m = p.scratch.f32({p.d.n_embd, p.n_tokens()});
      attention(p, w.attn, xn, out);
      mamba2(p, w.ssm2, xn, m);
      p.b.add(&out, &m, &out);
      return;
    }
    case Mixer::none:
      return;
  }
}

void run_ffn(LayerPass& p, const LayerWeights& w, uint32_t il, const sy_tensor& xn,
             const sy_tensor& out) {
  if (w.spec.ffn == FfnKind::moe)
    p.moe->forward(p, il, w.moe, xn, out);
  else
    ffn(p, w.ffn, p.d.ffn_act, xn, out);
}

void residual_add(LayerPass& p, const sy_tensor& y) {
  if (p.d.residual_scale != 0.0f) scale(p.b, y, p.d.residual_scale, y);
  p.b.add(&p.x, &y, &p.x);
}

void Arch::layer(LayerPass& p, const LayerWeights& w, uint32_t il) const {
  if (w.spec.mixer != Mixer::none) {
    p.b.rms_norm(&p.x, w.attn_norm, p.d.rms_eps, &p.xn);
    run_mixer(p, w, p.xn, p.mix);
    if (w.attn_post_norm) p.b.rms_norm(&p.mix, w.attn_post_norm, p.d.rms_eps, &p.mix);
    residual_add(p, p.mix);
    p.scratch.reset();
  }
  if (w.spec.ffn != FfnKind::none) {
    p.b.rms_norm(&p.x, w.ffn_norm, p.d.rms_eps, &p.xn);
    run_ffn(p, w, il, p.xn, p.mix);
    if (w.ffn_post_norm) p.b.rms_norm(&p.mix, w.ffn_post_norm, p.d.rms_eps, &p.mix);
    residual_add(p, p.mix);
    p.scratch.reset();
  }
  scale_output(p, w);
}

void scale_output(LayerPass& p, const LayerWeights& w) {
  if (!w.out_scale) return;
  const sy_tensor row = view(p.x, {p.d.n_embd * p.n_tokens(), 1});  // one value for all of it
  p.b.mul(&row, w.out_scale, &row);
}

uint64_t mixer_scratch(const ModelDesc& d, Mixer m) {
  switch (m) {
    case Mixer::attention:
      return attention_scratch(d);
    case Mixer::ssm:
      return mamba_scratch(d);
    case Mixer::ssm2:
      return mamba2_scratch(d);
    case Mixer::gdn:
      return gdn_scratch(d);
    case Mixer::shortconv:
      return shortconv_scratch(d);
    case Mixer::parallel:
      return attention_scratch(d) + mamba2_scratch(d) + d.n_embd + 16;
    case Mixer::none:
      return 0;
  }
  return 0;
}

uint64_t ffn_block_scratch(const ModelDesc& d, FfnKind f) {
  switch (f) {
    case FfnKind::dense:
      return ffn_scratch(d.n_ff);
    case FfnKind::moe:
      return moe_scratch(d);
    case FfnKind::none:
      return 0;
  }
  return 0;
}

uint64_t Arch::scratch_per_token(const ModelDesc& d) const {
  uint64_t most = 0;
  for (const LayerSpec& s : d.layers)
    most = std::max({most, mixer_scratch(d, s.mixer), ffn_block_scratch(d, s.ffn)});
  return most;
}

}  // namespace sy::model
