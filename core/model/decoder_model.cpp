#include "model/decoder_model.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "gguf/gguf.h"
#include "host/log.h"
#include "model/arch.h"
#include "model/decoder_ops.h"
#include "model/ssm_calls.h"

namespace sy::model {

struct DecoderModel::Batch : FlatBatch {
  std::vector<int32_t> state_slots;  // one per sequence (models with recurrent layers)
  std::vector<SsmCall> ssm;          // how the conv and scan run (split at snapshot points)
};

DecoderModel::DecoderModel(const gguf::File& file, Backend& backend)
    : file_(file),
      backend_(backend),
      hp_(read_decoder_hparams(file)),
      weights_(file, backend),
      w_(bind_weights(weights_, file, *find_arch(hp_.arch), hp_)),
      state_(hp_.n_recurrent_layers(), hp_.conv_state_floats(), hp_.ssm_state_floats()) {
  OpNeeds needs;
  needs.ssm = hp_.n_recurrent_layers() > 0;
  needs.moe = hp_.n_moe_layers() > 0;
  needs.rope_ext = hp_.n_attn_layers() > 0 && hp_.rope.enabled &&
                   (!hp_.rope.plain() || w_.rope_freqs != nullptr);
  needs.bias_scale = w_.any_epilogue();
  require_ops(backend, hp_.arch, needs);
  if (!w_.accepted_unapplied.empty()) {
    std::string names;
    for (size_t i = 0; i < w_.accepted_unapplied.size() && i < 4; ++i)
      names += (i ? ", " : "") + w_.accepted_unapplied[i];
    logger()->warn(
        "{}: {} tensors are taken as llama.cpp's loader takes them but not applied, as its {} "
        "graph does not apply them: {}{}",
        file.origin(), w_.accepted_unapplied.size(), hp_.arch, names,
        w_.accepted_unapplied.size() > 4 ? ", ..." : "");
  }
  if (needs.moe)
    moe_ = std::make_unique<MoeFfn>(backend, hp_.n_embd, hp_.n_ff, hp_.n_expert, hp_.n_expert_used,
                                    hp_.moe_normalize, hp_.n_moe_layers());
  if (w_.needs_norm_ones) {  // FalconMamba-style dt/B/C norms without weights: multiply by 1
    const int64_t R = hp_.dt_rank, S = hp_.d_state;
    const std::vector<float> ones(std::max(R, S), 1.0f);
    ones_ = backend_.alloc(ones.size() * sizeof(float));
    ones_->write(0, ones.data(), ones.size() * sizeof(float));
    ones_r_ = make_tensor(*ones_, SY_DTYPE_F32, {R});
    ones_s_ = make_tensor(*ones_, SY_DTYPE_F32, {S});
    for (LayerWeights& L : w_.layers) {
      if (L.spec.mixer != Mixer::ssm) continue;
      L.ssm.dt_norm = &ones_r_;
      L.ssm.b_norm = L.ssm.c_norm = &ones_s_;
    }
  }
  fill_info();
}

DecoderModel::~DecoderModel() = default;

void DecoderModel::fill_info() {
  info_.arch = hp_.arch;
  info_.n_vocab = hp_.n_vocab;
  info_.n_ctx = hp_.n_ctx;
  info_.n_layer = hp_.n_layer;
  info_.n_attn_layers = hp_.n_attn_layers();
  info_.kv_row_width = info_.n_attn_layers ? hp_.kv_width() : 0;
  info_.state_bytes_per_seq = state_.bytes_per_seq();
  info_.n_expert = moe_ ? hp_.n_expert : 0;
  info_.n_expert_used = moe_ ? hp_.n_expert_used : 0;
  uint64_t idle_params = 0, idle_bytes = 0;  // unselected experts of one token
  for (const auto& t : file_.tensors()) {
    info_.weight_bytes += t.nbytes;
    info_.n_params += static_cast<uint64_t>(t.n_elements());
    if (moe_ && t.name.find("_exps.weight") != std::string::npos) {
      const double idle = 1.0 - double(hp_.n_expert_used) / hp_.n_expert;
      idle_params += static_cast<uint64_t>(t.n_elements() * idle);
      idle_bytes += static_cast<uint64_t>(t.nbytes * idle);
    }
  }
  info_.n_active_params = info_.n_params - idle_params;
  // A decode token reads every matrix once except the unselected experts; the embedding only
  // for its one row unless it is also the output matrix.
  const gguf::TensorInfo* embd = file_.find_tensor("token_embd.weight");
  info_.bytes_per_token = info_.weight_bytes - idle_bytes - (hp_.tied_output ? 0 : embd->nbytes);
}

void DecoderModel::reserve_state_slots(uint32_t n_slots) {
  state_.reserve(backend_, n_slots, hp_.d_conv, hp_.d_inner, hp_.d_state);
}

uint64_t DecoderModel::activation_bytes() const {
  return (act_ ? act_->size() : 0) + (moe_ ? moe_->scratch_bytes() : 0);
}

void DecoderModel::ensure_scratch(uint32_t n_tokens, uint32_t n_out) {
  if (n_tokens <= cap_tokens_ && n_out <= cap_out_) return;
  cap_tokens_ = std::max(cap_tokens_, n_tokens);
  cap_out_ = std::max(cap_out_, n_out);
  const uint64_t T = cap_tokens_, E = hp_.n_embd, F = hp_.n_ff, DI = hp_.d_inner;
  const uint64_t S = hp_.d_state, R = hp_.dt_rank, Q = hp_.q_width(), KV = hp_.kv_width();
  ScratchLayout layout;
  auto carve = [&](uint64_t floats) { return layout.carve(floats); };
  off_x_ = carve(E * T);
  off_xn_ = carve(E * T);
  off_mix_ = carve(E * T);
  if (hp_.n_recurrent_layers() > 0) {
    off_u_ = carve(DI * T);
    off_z_ = carve(DI * T);
    off_uc_ = carve(DI * T);
    off_dtr_ = carve(R * T);
    off_b_ = carve(S * T);
    off_c_ = carve(S * T);
    off_dt_ = carve(DI * T);
    off_y_ = carve(DI * T);
  }
  if (hp_.n_attn_layers() > 0) {
    off_q_ = carve(Q * T);
    off_k_ = carve(KV * T);
    off_v_ = carve(KV * T);
    off_attn_ = carve(Q * T);
  }
  if (F > 0) {
    off_gate_ = carve(F * T);
    off_up_ = carve(F * T);
  }
  off_sel_ = carve(E * cap_out_);
  off_logits_ = carve(uint64_t(hp_.n_vocab) * cap_out_);
  act_ = backend_.alloc(layout.size());
}

void DecoderModel::ssm_mixer(const SsmWeights& L, const Batch& bt, const sy_tensor& xn,
                             const sy_tensor& out) {
  const int64_t T = xn.ne[1], DI = hp_.d_inner, S = hp_.d_state, R = hp_.dt_rank;
  const sy_tensor u = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_u_);
  const sy_tensor z = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_z_);
  const sy_tensor uc = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_uc_);
  const sy_tensor dtr = make_tensor(*act_, SY_DTYPE_F32, {R, T}, off_dtr_);
  const sy_tensor bm = make_tensor(*act_, SY_DTYPE_F32, {S, T}, off_b_);
  const sy_tensor cm = make_tensor(*act_, SY_DTYPE_F32, {S, T}, off_c_);
  const sy_tensor dt = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_dt_);
  const sy_tensor y = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_y_);
  apply_linear(backend_, L.in_x, xn, u);
  apply_linear(backend_, L.in_z, xn, z);
  const uint32_t r = static_cast<uint32_t>(L.state_layer);
  for (const SsmCall& c : bt.ssm) {
    const sy_tensor cu = columns(u, c.t0, c.n_tokens), cuc = columns(uc, c.t0, c.n_tokens);
    sy_ssm_conv_args ca{};
    ca.struct_size = sizeof ca;
    ca.n_seqs = static_cast<uint32_t>(c.slots.size());
    ca.x = &cu, ca.weight = L.conv_w, ca.bias = L.conv_b, ca.y = &cuc;
    ca.state = &state_.conv(r);
    ca.seq_token_start = c.seq_start.data();
    ca.state_slots = c.slots.data();
    ca.apply_silu = 1;
    backend_.ssm_conv(&ca);
    for (const auto& [from, to] : c.copies) state_.copy_conv(r, from, to);
  }
  backend_.matmul(&uc, &L.x_dt, &dtr);
  backend_.matmul(&uc, &L.x_b, &bm);
  backend_.matmul(&uc, &L.x_c, &cm);
  if (L.dt_norm) {
    backend_.rms_norm(&dtr, L.dt_norm, hp_.rms_eps, &dtr);
    backend_.rms_norm(&bm, L.b_norm, hp_.rms_eps, &bm);
    backend_.rms_norm(&cm, L.c_norm, hp_.rms_eps, &cm);
  }
  backend_.matmul(&dtr, L.dt_w, &dt);
  for (const SsmCall& c : bt.ssm) {
    const int64_t t0 = c.t0, n = c.n_tokens;
    const sy_tensor cu = columns(uc, t0, n), cdt = columns(dt, t0, n), cb = columns(bm, t0, n),
                    cc = columns(cm, t0, n), cz = columns(z, t0, n), cy = columns(y, t0, n);
    sy_ssm_scan_args sa{};
    sa.struct_size = sizeof sa;
    sa.n_seqs = static_cast<uint32_t>(c.slots.size());
    sa.u = &cu, sa.dt = &cdt, sa.dt_bias = L.dt_b, sa.a = L.a, sa.b = &cb, sa.c = &cc, sa.d = L.d;
    sa.z = &cz, sa.y = &cy;
    sa.state = &state_.ssm(r);
    sa.seq_token_start = c.seq_start.data();
    sa.state_slots = c.slots.data();
    backend_.ssm_scan(&sa);
    for (const auto& [from, to] : c.copies) state_.copy_ssm(r, from, to);
  }
  apply_linear(backend_, L.out, y, out);
}

void DecoderModel::attention_mixer(const AttentionWeights& L, const Batch& bt, KvCache& cache,
                                   const sy_tensor& xn, const sy_tensor& out) {
  const int64_t T = xn.ne[1], D = hp_.head_dim, H = hp_.n_head, HK = hp_.n_head_kv;
  const sy_tensor q = make_tensor(*act_, SY_DTYPE_F32, {D * H, T}, off_q_);
  const sy_tensor q3 = make_tensor(*act_, SY_DTYPE_F32, {D, H, T}, off_q_);
  const sy_tensor k = make_tensor(*act_, SY_DTYPE_F32, {D * HK, T}, off_k_);
  const sy_tensor k3 = make_tensor(*act_, SY_DTYPE_F32, {D, HK, T}, off_k_);
  const sy_tensor v = make_tensor(*act_, SY_DTYPE_F32, {D * HK, T}, off_v_);
  const sy_tensor attn = make_tensor(*act_, SY_DTYPE_F32, {D * H, T}, off_attn_);
  const sy_tensor attn3 = make_tensor(*act_, SY_DTYPE_F32, {D, H, T}, off_attn_);
  apply_linear(backend_, L.q, xn, q);
  apply_linear(backend_, L.k, xn, k);
  apply_linear(backend_, L.v, xn, v);
  if (hp_.rope.enabled) {
    apply_rope(backend_, hp_.rope, w_.rope_freqs, q3, bt.pos.data());
    apply_rope(backend_, hp_.rope, w_.rope_freqs, k3, bt.pos.data());
  }
  paged_attention(backend_, bt, cache, L.cache_layer, q3, k, v, attn3, static_cast<uint32_t>(HK),
                  hp_.attn_scale);
  apply_linear(backend_, L.o, attn, out);
}

std::vector<float> DecoderModel::forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                                         bool all_logits) {
  const bool attn = hp_.n_attn_layers() > 0, recr = hp_.n_recurrent_layers() > 0;
  Batch bt;
  static_cast<FlatBatch&>(bt) =
      flatten_batch(seqs, cache.block_size(), hp_.n_vocab, all_logits, attn);
  if (recr) {
    std::set<int32_t> used_slots;
    for (const SeqInput& s : seqs) {
      if (s.state_slot < 0 || static_cast<uint32_t>(s.state_slot) >= state_.n_slots())
        throw std::logic_error("forward: state_slot " + std::to_string(s.state_slot) +
                               " outside the " + std::to_string(state_.n_slots()) +
                               " reserved recurrent-state slots");
      if (!used_slots.insert(s.state_slot).second)
        throw std::logic_error("forward: two sequences share state_slot " +
                               std::to_string(s.state_slot));
      bt.state_slots.push_back(s.state_slot);
    }
    check_snapshot_slots(seqs, used_slots, state_.n_slots());
    bt.ssm = ssm_calls(seqs);
  }
  std::vector<TokenGroup> groups;
  if (moe_) groups = token_groups(seqs, hp_.n_expert, hp_.n_expert_used);
  const uint32_t T = bt.n_tokens();
  const uint32_t n_out = bt.n_out();
  if (T == 0) return {};
  // A sequence at position 0 is new to its slot (admission or recompute): forget the previous
  // owner's state.
  // A prefix-cache hit resumes from a snapshot of the state at pos0 instead.
  if (recr)
    for (const auto& s : seqs) {
      if (s.pos0 == 0) state_.reset(static_cast<uint32_t>(s.state_slot));
      if (s.restore_from >= 0)
        state_.copy(static_cast<uint32_t>(s.restore_from), static_cast<uint32_t>(s.state_slot));
    }
  ensure_scratch(T, std::max<uint32_t>(n_out, 1));
  if (moe_) {
    uint32_t max_k = 1;
    for (const auto& g : groups) max_k = std::max(max_k, g.k);
    moe_->reserve(T, max_k);
  }

  const int64_t E = hp_.n_embd, F = hp_.n_ff;
  const sy_tensor x = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_x_);
  const sy_tensor xn = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_xn_);
  const sy_tensor mix = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_mix_);
  const sy_tensor gate = make_tensor(*act_, SY_DTYPE_F32, {F, T}, off_gate_);
  const sy_tensor up = make_tensor(*act_, SY_DTYPE_F32, {F, T}, off_up_);
  const sy_tensor sel = make_tensor(*act_, SY_DTYPE_F32, {E, n_out}, off_sel_);
  const sy_tensor logits = make_tensor(*act_, SY_DTYPE_F32, {hp_.n_vocab, n_out}, off_logits_);

  backend_.get_rows(w_.tok_embd, bt.ids.data(), T, &x);
  for (uint32_t l = 0; l < hp_.n_layer; ++l) {
    const LayerWeights& L = w_.layers[l];
    backend_.rms_norm(&x, L.attn_norm, hp_.rms_eps, &xn);
    if (L.spec.mixer == Mixer::attention)
      attention_mixer(L.attn, bt, cache, xn, mix);
    else
      ssm_mixer(L.ssm, bt, xn, mix);
    backend_.add(&x, &mix, &x);
    if (L.spec.ffn == FfnKind::none) continue;
    backend_.rms_norm(&x, L.ffn_norm, hp_.rms_eps, &xn);
    if (L.spec.ffn == FfnKind::moe)
      moe_->forward(L.ffn.moe_index, l, L.ffn.exps, xn, mix, groups);
    else
      swiglu_ffn(backend_, xn, L.ffn.gate, L.ffn.up, L.ffn.down, gate, up, mix);
    backend_.add(&x, &mix, &x);
  }
  std::vector<float> out = output_logits(backend_, bt, x, *w_.out_norm, hp_.rms_eps, *w_.output,
                                         sel, logits, *act_, off_logits_);
  if (moe_) moe_->flush_counts();
  return out;
}

}  // namespace sy::model
