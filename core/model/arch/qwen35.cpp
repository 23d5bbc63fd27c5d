// The gated delta net family: qwen35 and qwen35moe (Qwen3.5 / Qwen3.6, src/models/qwen35*.cpp)
// and qwen3next (Qwen3-Next, src/models/qwen3next.cpp). Three of every four layers
// (full_attention_interval) are gated delta nets, the rest gated attention (q/k RMS norms,
// partial NEOX RoPE, a sigmoid output gate from the second half of each attn_q head); the FFN is
// normed by post_attention_norm: SwiGLU (qwen35) or a softmax MoE with a sigmoid-gated shared
// expert. qwen35 applies every projection's `.scale`, qwen3next only attn_output's; qwen3next's
// value head j reads key head j / (value heads / key heads), Qwen3.5's j mod key heads. Trailing
// multi-token-prediction blocks (nextn_predict_layers) are taken but not run.
#include <cmath>
#include <numeric>

#include "model/arch/arch.h"
#include "model/arch/families.h"
#include "model/arch/ssm_keys.h"

namespace sy::model {
namespace {

using names::Tensor;

enum class Variant { qwen35, qwen35moe, qwen3next };

class Qwen35 final : public Arch {
 public:
  Qwen35(std::string_view name, Variant v) : name_(name), v_(v) {}
  std::string_view name() const override { return name_; }

  void read_keys(const KeyReader& k, ModelDesc& d) const override {
    d.d_conv = k.u32(Key::ssm_conv_kernel);
    d.d_inner = k.u32(Key::ssm_inner_size);
    d.d_state = k.u32(Key::ssm_state_size);
    d.dt_rank = k.u32(Key::ssm_time_step_rank);  // value heads
    d.n_group = k.u32(Key::ssm_group_count);     // key heads
    if (d.d_conv == 0 || d.d_state == 0 || d.dt_rank == 0 || d.n_group == 0 ||
        d.dt_rank % d.n_group != 0)
      throw k.fail(k.name(Key::ssm_time_step_rank) +
                   " (value heads) must be a positive multiple of " + k.name(Key::ssm_group_count) +
                   " (key heads), and the other ssm sizes positive");
    // llama.cpp's gated_delta_net asserts the value head size equals the key head size.
    if (d.d_inner != d.dt_rank * d.d_state)
      throw k.fail(k.name(Key::ssm_inner_size) + " (" + std::to_string(d.d_inner) +
                   ") must be time_step_rank * state_size (" +
                   std::to_string(d.dt_rank * d.d_state) + ")");
    const std::vector<bool> all(d.n_layer, true);
    set_heads(k, d, read_head_counts(k, d), all);
    read_head_dim(k, d, false);
    const uint32_t n_rot = k.u32(Key::rope_dimension_count, d.head_dim);
    if (n_rot == 0 || n_rot % 2 || n_rot > d.head_dim)
      throw k.fail(k.name(Key::rope_dimension_count) + " must be even and at most the head size");
    if (v_ != Variant::qwen3next) check_sections(k, n_rot);
    d.rope = read_rope(k, d, n_rot, true);
    d.n_ff = read_n_ff(k, d, all);
    if (v_ != Variant::qwen35) {
      if (d.n_expert == 0) throw k.fail(k.name(Key::expert_count) + " must be positive");
      d.n_ff_exp = k.u32(Key::expert_feed_forward_length, 0u);
      d.n_ff_shexp = k.u32(Key::expert_shared_feed_forward_length, d.n_ff);
      d.moe_normalize = true;
    }
    d.n_nextn = v_ == Variant::qwen3next ? 0 : k.u32(Key::nextn_predict_layers, 0u);
    if (d.n_nextn >= d.n_layer)
      throw k.fail(k.name(Key::nextn_predict_layers) + " must be below block_count");
    const uint32_t interval = k.u32(Key::full_attention_interval, 4u);
    if (interval == 0) throw k.fail(k.name(Key::full_attention_interval) + " must be positive");
    const FfnKind ffn = v_ == Variant::qwen35 ? FfnKind::dense : FfnKind::moe;
    for (uint32_t l = 0; l < d.n_layer; ++l) {
      if (l >= d.n_layer - d.n_nextn)  // a multi-token-prediction block: not run here
        d.layers.push_back({Mixer::none, FfnKind::none});
      else
        d.layers.push_back({(l + 1) % interval ? Mixer::gdn : Mixer::attention, ffn});
    }
  }

  void write_keys(KeyWriter& k, const ModelDesc& d) const override {
    k.u32(Key::feed_forward_length, d.n_ff);
    write_dense_attention(k, d);
    if (v_ != Variant::qwen3next) {
      // Text positions rotate every pair like NEOX when the interleaved sections cover the
      // n_rot / 2 pairs: section k gets the pairs i < n_rot / 2 with i mod 3 = k.
      const int32_t half = int32_t(d.rope.n_rot / 2);
      k.i32_array(Key::rope_dimension_sections, {(half + 2) / 3, (half + 1) / 3, half / 3, 0});
    }
    k.u32(Key::ssm_conv_kernel, d.d_conv);
    k.u32(Key::ssm_inner_size, d.d_inner);
    k.u32(Key::ssm_state_size, d.d_state);
    k.u32(Key::ssm_time_step_rank, d.dt_rank);
    k.u32(Key::ssm_group_count, d.n_group);
    uint32_t interval = 1;
    while (interval <= d.n_layer && d.layers[interval - 1].mixer != Mixer::attention) ++interval;
    k.u32(Key::full_attention_interval, interval);
    k.f32(Key::layer_norm_rms_epsilon, d.rms_eps);
    if (d.n_expert > 0) {
      k.u32(Key::expert_count, d.n_expert);
      k.u32(Key::expert_used_count, d.n_expert_used);
      k.u32(Key::expert_feed_forward_length, d.n_ff_exp);
      k.u32(Key::expert_shared_feed_forward_length, d.n_ff_shexp);
    }
  }

  void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const override {
    global_tensors(t, d, w);
    const bool scales = v_ != Variant::qwen3next;
    AttentionRules attn;
    attn.qkv = {Take::unapplied, scales};  // create_tensor_qkv's biases: never added
    attn.out = {Take::no, true};
    attn.qk_norm = true;
    attn.output_gate = true;
    attn.fused_qkv = false;
    GdnRules gdn;
    gdn.scales = scales;
    gdn.out_scale = scales;
    gdn.ba_fused = v_ == Variant::qwen3next;
    gdn.head_map = v_ == Variant::qwen3next ? SY_GDN_HEADS_BLOCKED : SY_GDN_HEADS_MODULO;
    const LinearRules ffn{Take::no, scales, true};
    MoeRules moe;
    moe.expert_scales = scales ? Take::applied : Take::unapplied;
    moe.fused_gate_up = true;
    moe.shared = true;
    moe.shared_gate = true;
    moe.shared_rules = {Take::no, scales, true};
    layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
      if (L.spec.mixer == Mixer::none) {  // multi-token prediction: taken, not run here
        nextn_block(t, d, il);
        return;
      }
      L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
      L.ffn_norm = layer_norm(t, d, Tensor::post_attention_norm, il);
      if (L.spec.mixer == Mixer::attention)
        attention_tensors(t, d, il, attn, L.attn);
      else
        gdn_tensors(t, d, il, gdn, L.gdn);
      if (L.spec.ffn == FfnKind::moe)
        moe_tensors(t, d, il, moe, L.moe);
      else
        ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    });
  }

 private:
  // IMROPE with text positions (p, p, p, 0): a pair whose section is the fourth keeps position
  // 0 (no rotation). Implemented when no pair of the n_rot / 2 falls there: then it is NEOX.
  static void check_sections(const KeyReader& k, uint32_t n_rot) {
    if (!k.has(Key::rope_dimension_sections))
      throw k.fail("missing key " + k.name(Key::rope_dimension_sections));
    const std::vector<uint32_t> s = k.per_layer(Key::rope_dimension_sections, {0, 0, 0, 0});
    const uint32_t total = std::accumulate(s.begin(), s.end(), 0u);
    for (uint32_t i = 0; i < n_rot / 2; ++i) {
      const uint32_t sector = total ? i % total : 0;
      const bool t = sector % 3 == 0 && sector < 3 * s[0];
      const bool h = sector % 3 == 1 && sector < 3 * s[1];
      const bool w = sector % 3 == 2 && sector < 3 * s[2];
      if (!(t || h || w))
        throw k.fail(k.name(Key::rope_dimension_sections) + ": rotary pair " + std::to_string(i) +
                     " falls in the fourth section (a position of 0 for text): not implemented");
    }
  }

  // The tensors of a multi-token-prediction block, as the loader takes them.
  void nextn_block(TensorTable& t, const ModelDesc& d, uint32_t il) const {
    const int64_t E = d.n_embd, Q = d.q_width(), KV = d.kv_width(), D = d.head_dim;
    auto take = [&](Tensor tn, std::initializer_list<int64_t> ne, const char* suffix = "weight") {
      t.unapplied(names::tensor(tn, il, suffix), ne);
    };
    take(Tensor::attn_norm, {E});
    take(Tensor::post_attention_norm, {E});
    take(Tensor::attn_q, {E, 2 * Q});
    take(Tensor::attn_k, {E, KV});
    take(Tensor::attn_v, {E, KV});
    take(Tensor::attn_output, {Q, E});
    take(Tensor::attn_q_norm, {D});
    take(Tensor::attn_k_norm, {D});
    for (Tensor tn : {Tensor::attn_q, Tensor::attn_k, Tensor::attn_v, Tensor::attn_output}) {
      take(tn, {1}, "scale");
      take(tn, {1}, "input_scale");
    }
    take(Tensor::nextn_eh_proj, {2 * E, E});
    take(Tensor::nextn_enorm, {E});
    take(Tensor::nextn_hnorm, {E});
    take(Tensor::nextn_embed_tokens, {E, d.n_vocab});
    take(Tensor::nextn_shared_head_head, {E, d.n_vocab});
    take(Tensor::nextn_shared_head_norm, {E});
    if (v_ == Variant::qwen35) {
      take(Tensor::ffn_gate, {E, d.n_ff});
      take(Tensor::ffn_up, {E, d.n_ff});
      take(Tensor::ffn_down, {d.n_ff, E});
      return;
    }
    const int64_t X = d.n_expert, F = d.n_ff_exp, S = d.n_ff_shexp;
    take(Tensor::ffn_gate_inp, {E, X});
    take(Tensor::ffn_gate_exps, {E, F, X});
    take(Tensor::ffn_up_exps, {E, F, X});
    take(Tensor::ffn_gate_up_exps, {E, 2 * F, X});
    take(Tensor::ffn_down_exps, {F, E, X});
    take(Tensor::ffn_gate_inp_shexp, {E});
    take(Tensor::ffn_gate_shexp, {E, S});
    take(Tensor::ffn_up_shexp, {E, S});
    take(Tensor::ffn_down_shexp, {S, E});
  }

  std::string_view name_;
  Variant v_;
};

}  // namespace

const Arch& qwen35_arch() {
  static const Qwen35 a("qwen35", Variant::qwen35);
  return a;
}
const Arch& qwen35moe_arch() {
  static const Qwen35 a("qwen35moe", Variant::qwen35moe);
  return a;
}
const Arch& qwen3next_arch() {
  static const Qwen35 a("qwen3next", Variant::qwen3next);
  return a;
}

}  // namespace sy::model
