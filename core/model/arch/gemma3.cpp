// gemma3 (Gemma 3; src/models/gemma3.cpp): embeddings times sqrt(n_embd); per-head q/k RMS
// norms before NEOX RoPE; q scaled by 1 / sqrt(head size) (27B: by 1 / sqrt(n_embd / n_head))
// with a unit softmax scale; a norm of the attention output and of the FFN output before each
// residual add; a GELU-gated FFN; local layers over a sliding window with their own RoPE base and
// no scaling, every `sliding_window_pattern`-th layer global; optional final-logit soft-capping.
#include <cmath>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/gemma_layer.h"

namespace sy::model {
namespace {

// llama.cpp's default period: five local layers, then a global one.
constexpr uint32_t kDefaultPeriod = 6;

class Gemma3 final : public Arch {
 public:
  std::string_view name() const override { return "gemma3"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_dense_attention(k, d, true);
    d.n_ff = read_n_ff(k, d, std::vector<bool>(d.n_layer, true));
    d.ffn_act = FfnAct::geglu;
    d.embedding_scale = std::sqrt(static_cast<float>(d.n_embd));
    // llama.cpp scales q (f_attention_scale) and softmaxes with scale 1: the same product.
    // 27B (62 layers): n_embd / n_head, divided in integers as llama.cpp divides them.
    const uint32_t q_size = d.n_layer == 62 ? d.n_embd / d.n_head : d.head_dim;
    d.attn_scale = 1.0f / std::sqrt(static_cast<float>(q_size));
    d.logit_softcap = k.f32(Key::final_logit_softcapping, 0.0f);
    if (d.logit_softcap < 0.0f)
      throw k.fail(k.name(Key::final_logit_softcapping) + " must not be negative");
    d.layers.assign(d.n_layer, LayerSpec{Mixer::attention, FfnKind::dense});
    d.window = k.u32(Key::sliding_window, 0u);
    d.rope_swa = d.rope;
    if (d.window == 0) return;
    read_swa_period(k, d, kDefaultPeriod);
    d.rope_swa.freq_base = read_freq_base_swa(k, 10000.0f);
    d.rope_swa.freq_scale = 1.0f;  // rope_freq_scale_train_swa: local layers are not scaled
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    k.u32(Key::head_count, d.n_head);
    k.u32(Key::head_count_kv, d.n_head_kv);
    k.u32(Key::key_length, d.head_dim);
    k.u32(Key::value_length, d.head_dim);
    k.f32(Key::rope_freq_base, d.rope.freq_base);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.window) {
      k.u32(Key::sliding_window, d.window);
      k.f32(Key::rope_freq_base_swa, d.rope_swa.freq_base);
      write_swa_period(k, d, kDefaultPeriod);
    }
    if (d.logit_softcap != 0.0f) k.f32(Key::final_logit_softcapping, d.logit_softcap);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    gemma_layer_tensors(t, d, w, true);
  }
};

}  // namespace

const Arch& gemma3_arch() {
  static const Gemma3 a;
  return a;
}

}  // namespace sy::model
