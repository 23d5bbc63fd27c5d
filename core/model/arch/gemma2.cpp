// gemma2 (Gemma 2; src/models/gemma2.cpp): Gemma 3's layer without the q/k norms, and logit
// soft-capping in every attention softmax (attn_logit_softcapping, 50 by default) and on the
// output (final_logit_softcapping, 30 by default: applied whether or not the file says so).
// Every other layer is local (sliding_window_pattern 2; a 4096-position window unless the file
// says otherwise) with the global layers' RoPE, or rope.freq_base_swa's base.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/gemma_layer.h"

namespace sy::model {
namespace {

constexpr uint32_t kDefaultPeriod = 2;
constexpr uint32_t kDefaultWindow = 4096;
constexpr float kDefaultAttnCap = 50.0f, kDefaultFinalCap = 30.0f;

float read_cap(const KeyReader& k, Key key, float def) {
  const float c = k.f32(key, def);
  if (!(c > 0.0f) || !std::isfinite(c)) throw k.fail(k.name(key) + " must be positive");
  return c;
}

class Gemma2 final : public Arch {
 public:
  std::string_view name() const override { return "gemma2"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_dense_attention(k, d, true);
    d.n_ff = read_n_ff(k, d, std::vector<bool>(d.n_layer, true));
    d.ffn_act = FfnAct::geglu;
    d.embedding_scale = std::sqrt(static_cast<float>(d.n_embd));
    // As Gemma 3: q scaled by 1 / sqrt(head size), 27B (46 layers) by 1 / sqrt(n_embd / n_head).
    const uint32_t q_size = d.n_layer == 46 ? d.n_embd / d.n_head : d.head_dim;
    d.attn_scale = 1.0f / std::sqrt(static_cast<float>(q_size));
    d.attn_softcap = read_cap(k, Key::attn_logit_softcapping, kDefaultAttnCap);
    d.logit_softcap = read_cap(k, Key::final_logit_softcapping, kDefaultFinalCap);
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, FfnKind::dense});
    d.window = k.u32(Key::sliding_window, kDefaultWindow);
    if (d.window == 0) throw k.fail(k.name(Key::sliding_window) + " must be positive");
    read_swa_period(k, d, kDefaultPeriod);
    d.rope_swa = d.rope;  // rope_freq_{base,scale}_train_swa start as the global layers'
    d.rope_swa.freq_base = read_freq_base_swa(k, d.rope.freq_base);
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    write_dense_attention(k, d);
    k.u32(Key::feed_forward_length, d.n_ff);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    k.u32(Key::sliding_window, d.window);
    if (d.rope_swa.freq_base != d.rope.freq_base)
      k.f32(Key::rope_freq_base_swa, d.rope_swa.freq_base);
    write_swa_period(k, d, kDefaultPeriod);
    k.f32(Key::attn_logit_softcapping, d.attn_softcap);
    k.f32(Key::final_logit_softcapping, d.logit_softcap);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    gemma_layer_tensors(t, d, w, false);
  }
};

}  // namespace

const Arch& gemma2_arch() {
  static const Gemma2 a;
  return a;
}

}  // namespace sy::model
