#include "model/blocks/moe.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "host/host_api.h"
#include "model/blocks/ops.h"
#include "model/names.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"

namespace sy::model {

using names::Tensor;

void moe_tensors(TensorTable& t, const ModelDesc& d, uint32_t il, const MoeRules& r,
                 MoeWeights& w) {
  const int64_t E = d.n_embd, F = d.n_ff_exp, X = d.n_expert;
  const int64_t in = r.latent && d.moe_latent ? d.moe_latent : E;
  const Init res{Init::residual, 0.0f};
  auto name = [&](Tensor tn) { return names::tensor(tn, il); };
  auto base = [&](Tensor tn) { return names::tensor(tn, il, ""); };
  w.router.w = t.f32(name(Tensor::ffn_gate_inp), {E, X}, {Init::router, 0.0f});
  if (r.selection_bias)
    w.selection_bias =
        &t.f32(names::tensor(Tensor::exp_probs_b, il, "bias"), {X}, {Init::normal, 0.1f});
  if (r.latent && d.moe_latent) {
    LinearRules latent;
    latent.generic_scales = false;
    w.latent_down = t.linear(base(Tensor::ffn_latent_down), E, in, latent);
    w.latent_up = t.linear(base(Tensor::ffn_latent_up), in, E, latent, res);
  }
  // The per-expert `.scale` {X} (applied or only taken) and `.input_scale` {X} (never applied).
  auto scales = [&](Tensor tn) -> const sy_tensor* {
    const std::string b = base(tn);
    const sy_tensor* s = nullptr;
    if (r.expert_scales == Take::applied)
      s = t.optional_f32(b + ".scale", {X}, {Init::normal, 0.0f});
    else if (r.expert_scales == Take::unapplied)
      t.unapplied(b + ".scale", {X});
    t.unapplied(b + ".input_scale", {X});
    return s;
  };
  const std::string fused = name(Tensor::ffn_gate_up_exps);
  if (r.fused_gate_up && t.has(fused)) {
    // One {in, 2F, X} tensor, per expert [gate rows | up rows]: two views with its stride.
    // llama.cpp's generic pass creates no `.scale` for it (its up and gate tensors are absent).
    const sy_tensor& gu = t.matrix(fused, {in, 2 * F, X});
    const uint64_t row = static_cast<uint64_t>(dtype::row_bytes(gu.dtype, gu.ne[0]));
    w.expert_stride = row * static_cast<uint64_t>(2 * F);
    w.gate_exps = gu;
    w.gate_exps.ne[1] = F;
    w.up_exps = w.gate_exps;
    w.up_exps.offset += row * static_cast<uint64_t>(F);
  } else if (r.writer_order) {  // jamba's converter order: gate, down, up
    if (r.gated) w.gate_exps = t.matrix(name(Tensor::ffn_gate_exps), {in, F, X});
    w.down_exps = t.matrix(name(Tensor::ffn_down_exps), {F, in, X}, res);
    w.up_exps = t.matrix(name(Tensor::ffn_up_exps), {in, F, X});
    if (r.gated) w.gate_scale = scales(Tensor::ffn_gate_exps);
    w.up_scale = scales(Tensor::ffn_up_exps);
    w.down_scale = scales(Tensor::ffn_down_exps);
  } else {
    if (r.gated) {
      w.gate_exps = t.matrix(name(Tensor::ffn_gate_exps), {in, F, X});
      w.gate_scale = scales(Tensor::ffn_gate_exps);
    }
    w.up_exps = t.matrix(name(Tensor::ffn_up_exps), {in, F, X});
    w.up_scale = scales(Tensor::ffn_up_exps);
  }
  if (!r.writer_order) {
    w.down_exps = t.matrix(name(Tensor::ffn_down_exps), {F, in, X}, res);
    w.down_scale = scales(Tensor::ffn_down_exps);
  }
  if (r.biases) {
    const Init b{Init::normal, 0.02f};
    w.router.bias = t.f32(base(Tensor::ffn_gate_inp) + ".bias", {X}, b);
    w.router.has_bias = true;
    if (r.gated) w.gate_bias = &t.f32(base(Tensor::ffn_gate_exps) + ".bias", {F, X}, b);
    w.up_bias = &t.f32(base(Tensor::ffn_up_exps) + ".bias", {F, X}, b);
    w.down_bias = &t.f32(base(Tensor::ffn_down_exps) + ".bias", {in, X}, b);
  }
  if (r.shared && d.n_ff_shexp > 0) {
    if (r.shared_gate)
      // {n_embd}: one dimension, so llama-quantize keeps it F32 (it quantizes 2-D and 3-D only).
      w.shared_gate = &t.f32(name(Tensor::ffn_gate_inp_shexp), {E}, {Init::router, 0.0f});
    ffn_tensors(t, d, il, d.n_ff_shexp, r.shared_rules, d.ffn_act == FfnAct::swiglu, w.shared,
                kSharedExpert);
  }
}

uint64_t moe_scratch(const ModelDesc& d) {
  return d.n_ff_shexp ? ffn_scratch(d.n_ff_shexp) + d.n_embd + 32 : 0;
}

std::vector<TokenGroup> token_groups(const std::vector<SeqInput>& seqs, uint32_t n_expert,
                                     uint32_t default_k) {
  std::vector<TokenGroup> groups;
  uint32_t t = 0;
  for (const SeqInput& s : seqs) {
    if (s.n_expert_used < 0 || s.n_expert_used > static_cast<int32_t>(n_expert))
      throw sy::Error("forward: n_expert_used " + std::to_string(s.n_expert_used) +
                      " outside [0, " + std::to_string(n_expert) + "]");
    const uint32_t k = s.n_expert_used ? static_cast<uint32_t>(s.n_expert_used) : default_k;
    if (s.n_tokens == 0) continue;
    if (!groups.empty() && groups.back().k == k)
      groups.back().n += s.n_tokens;
    else
      groups.push_back({t, s.n_tokens, k});
    t += s.n_tokens;
  }
  return groups;
}

MoeFfn::MoeFfn(Backend& backend, const ModelDesc& d)
    : b_(backend),
      d_(d),
      E_(d.n_embd),
      F_(d.n_ff_exp),
      X_(d.n_expert),
      n_used_(d.n_expert_used),
      n_moe_layers_(d.n_moe_layers()),
      in_(d.moe_latent ? d.moe_latent : d.n_embd) {}

void MoeFfn::reserve(uint32_t n_tokens, uint32_t max_k) {
  pending_.clear();
  if (n_tokens <= cap_ && max_k <= cap_k_) return;
  cap_ = std::max(cap_, n_tokens);
  cap_k_ = std::max(cap_k_, max_k);
  const uint64_t T = cap_, k = cap_k_;
  uint64_t off = 0;
  auto carve = [&](uint64_t values) {
    const uint64_t o = off;
    off += (values * 4 + 63) / 64 * 64;
    return o;
  };
  off_logits_ = carve(X_ * T);
  off_ids_ = carve(k * T * n_moe_layers_);  // every layer's ids stay until flush_counts
  off_w_ = carve(k * T);
  off_gate_ = carve(uint64_t(F_) * k * T);
  off_up_ = carve(uint64_t(F_) * k * T);
  off_down_ = carve(uint64_t(in_) * k * T);
  off_latent_ = carve(uint64_t(in_) * T + uint64_t(E_) * T);
  act_ = b_.alloc(off);
}

void MoeFfn::forward(LayerPass& p, uint32_t layer, const MoeWeights& w, const sy_tensor& x,
                     const sy_tensor& y, const sy_tensor* router_x) {
  const int64_t E = E_, F = F_, X = X_, IN = in_;
  const int64_t T = x.ne[1];
  const sy_tensor logits = make_tensor(*act_, SY_DTYPE_F32, {X, T}, off_logits_);
  apply_linear(b_, w.router, router_x ? *router_x : x, logits);
  // The experts read the latent projection of x where the family has one.
  sy_tensor xin = x;
  const sy_tensor moe_out =
      w.latent_up.present() ? make_tensor(*act_, SY_DTYPE_F32, {IN, T}, off_latent_ + IN * T * 4)
                            : y;
  if (w.latent_down.present()) {
    xin = make_tensor(*act_, SY_DTYPE_F32, {IN, T}, off_latent_);
    apply_linear(b_, w.latent_down, x, xin);
  }
  const bool gated = w.gate_exps.struct_size != 0;
  for (const TokenGroup& g : p.groups) {
    const int64_t n = g.n, k = g.k;
    const uint64_t ids_off =
        off_ids_ + (uint64_t(w.moe_index) * cap_ * cap_k_ + uint64_t(g.t0) * cap_k_) * 4;
    const sy_tensor lg = make_tensor(*act_, SY_DTYPE_F32, {X, n}, off_logits_ + g.t0 * X * 4);
    const sy_tensor ids = make_tensor(*act_, SY_DTYPE_I32, {k, n}, ids_off);
    const sy_tensor wt = make_tensor(*act_, SY_DTYPE_F32, {k, n}, off_w_);
    sy_moe_gate_args ga{};
    ga.struct_size = sizeof ga;
    ga.gating = d_.moe_gating == MoeGating::sigmoid ? SY_MOE_GATING_SIGMOID : SY_MOE_GATING_SOFTMAX;
    ga.logits = &lg;
    ga.ids = &ids;
    ga.weights = &wt;
    ga.normalize = d_.moe_normalize ? 1u : 0u;
    ga.scale = d_.moe_weights_scale;
    ga.selection_bias = w.selection_bias;
    b_.moe_gate(&ga);
    pending_.push_back({layer, ids_off, g.k, g.n});

    sy_tensor xg = xin;  // {IN, 1, n}: every slot of a token reads the same input row
    xg.offset += g.t0 * IN * 4;
    xg.ne[1] = 1, xg.ne[2] = n;
    sy_tensor yg = moe_out;
    yg.offset += g.t0 * moe_out.ne[0] * 4;
    yg.ne[1] = n;
    const sy_tensor gate = make_tensor(*act_, SY_DTYPE_F32, {F, k, n}, off_gate_);
    const sy_tensor up = make_tensor(*act_, SY_DTYPE_F32, {F, k, n}, off_up_);
    const sy_tensor down = make_tensor(*act_, SY_DTYPE_F32, {IN, k, n}, off_down_);
    auto experts = [&](const sy_tensor& in, const sy_tensor& wexp, uint64_t stride,
                       const sy_tensor* s, const sy_tensor* bias, const sy_tensor& out) {
      sy_moe_matmul_args a{};
      a.struct_size = sizeof a;
      a.x = &in;
      a.w = &wexp;
      a.ids = &ids;
      a.y = &out;
      a.expert_stride = stride;
      a.scale = s;
      a.bias = bias;
      b_.moe_matmul(&a);
    };
    if (gated) experts(xg, w.gate_exps, w.expert_stride, w.gate_scale, w.gate_bias, gate);
    experts(xg, w.up_exps, w.expert_stride, w.up_scale, w.up_bias, up);
    if (gated) {
      if (d_.ffn_act == FfnAct::swiglu_oai) {  // OpenAI's constants (llama.cpp's build_moe_ffn)
        const sy_swiglu_oai_args a{sizeof(sy_swiglu_oai_args), 0, &gate, &up, &gate, 1.702f, 7.0f};
        b_.swiglu_oai(&a);
      } else if (d_.ffn_act == FfnAct::geglu) {  // gelu(gate) * up (ggml_geglu_split)
        unary(b_, SY_UNARY_GELU, gate, gate);
        b_.mul(&gate, &up, &gate);
      } else {
        b_.swiglu(&gate, &up, &gate);
      }
      experts(gate, w.down_exps, 0, w.down_scale, w.down_bias, down);
    } else {
      unary(b_, SY_UNARY_RELU_SQR, up, up);
      experts(up, w.down_exps, 0, w.down_scale, w.down_bias, down);
    }
    b_.moe_combine(&down, &wt, &yg);
  }
  if (w.latent_up.present()) apply_linear(b_, w.latent_up, moe_out, y);
  if (!w.shared.up.present()) return;
  // The shared expert, sigmoid-gated per token where the family gates it, added to the experts'.
  const sy_tensor s = p.scratch.f32({E, T});
  ffn(p, w.shared, d_.ffn_act, x, s);
  if (w.shared_gate) {
    const sy_tensor g = p.scratch.f32({1, T});
    b_.matmul(&x, w.shared_gate, &g);
    unary(b_, SY_UNARY_SIGMOID, g, g);
    b_.mul(&s, &g, &s);
  }
  b_.add(&y, &s, &y);
}

void MoeFfn::flush_counts() {
  if (pending_.empty()) return;
  counts_.assign(size_t(X_), 0.0);
  const void* base = act_->host_ptr();
  // Consecutive entries of one layer are summed before touching the counter map.
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending& p = pending_[i];
    const size_t n = size_t(p.k) * p.n;
    const int32_t* ids;
    if (base) {
      ids = reinterpret_cast<const int32_t*>(static_cast<const uint8_t*>(base) + p.offset);
    } else {
      host_ids_.resize(n);
      act_->read(p.offset, host_ids_.data(), n * 4);
      ids = host_ids_.data();
    }
    for (size_t j = 0; j < n; ++j) counts_[ids[j]] += 1;
    if (i + 1 < pending_.size() && pending_[i + 1].layer == p.layer) continue;
    const std::string prefix = "expert_activations." + std::to_string(p.layer) + ".";
    double loads = 0;  // distinct experts this step read: the weight bytes actually touched
    for (uint32_t e = 0; e < X_; ++e)
      if (counts_[e] > 0) host_counter_add(prefix + std::to_string(e), counts_[e]), ++loads;
    host_counter_add("expert_loads." + std::to_string(p.layer), loads);
    std::fill(counts_.begin(), counts_.end(), 0.0);
  }
  pending_.clear();
}

}  // namespace sy::model
