// mamba2 (src/models/mamba2.cpp): Mamba-2 mixers only, no FFN; ssm_in/ssm_out `.scale` applied.
#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

class Mamba2 final : public Arch {
 public:
  std::string_view name() const override { return "mamba2"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_mamba2_sizes(k, d, true);
    d.layers.assign(d.n_layer, LayerSpec{Mixer::ssm2, FfnKind::none});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    // convert_hf_to_gguf's Mamba2Model writes head_count 0, but llama.cpp's mamba2 loader (at
    // 0253fb21f) sizes ssm_in with head_count rather than ssm.time_step_rank, so such a file does
    // not load there; its own test writer writes the SSM head count, as this does. The loader
    // here reads the heads from ssm.time_step_rank and loads both.
    k.u32(Key::feed_forward_length, 0);
    k.u32(Key::head_count, d.dt_rank);
    write_ssm_sizes(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      mamba2_tensors(t, d, il, {true, Need::required}, L.ssm2);
    });
  }
};

}  // namespace

const Arch& mamba2_arch() {
  static const Mamba2 a;
  return a;
}

}  // namespace sy::model
