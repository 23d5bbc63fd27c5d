// mamba (src/models/mamba.cpp): Mamba-1 mixers only, no FFN; FalconMamba's ssm.dt_b_c_rms turns
// on unit-weight RMS norms of dt, B and C.
#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

class Mamba final : public Arch {
 public:
  std::string_view name() const override { return "mamba"; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    read_mamba1_sizes(k, d);
    d.dt_b_c_norms = k.boolean(Key::ssm_dt_b_c_rms, false);  // FalconMamba: no weights
    d.layers.assign(d.n_layer, LayerSpec{Mixer::ssm, FfnKind::none});
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    // The Mamba converter writes these two as 0 ("seemingly required").
    k.u32(Key::feed_forward_length, 0);
    k.u32(Key::head_count, 0);
    write_mamba1_sizes(k, d);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      mamba_tensors(t, d, il, false, true, L.ssm);
    });
  }
};

}  // namespace

const Arch& mamba_arch() {
  static const Mamba a;
  return a;
}

}  // namespace sy::model
