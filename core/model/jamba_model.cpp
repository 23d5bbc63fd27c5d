#include "model/jamba_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "dtype_util.h"
#include "gguf/gguf.h"
#include "model/decoder_ops.h"
#include "model/ssm_calls.h"

namespace sy::model {

using Kind = WeightMap::Kind;

struct JambaModel::Batch : FlatBatch {
  std::vector<int32_t> state_slots;  // one per sequence (models with recurrent layers)
  std::vector<SsmCall> ssm;          // how the conv and scan run (split at snapshot points)
};

JambaModel::JambaModel(const gguf::File& file, Backend& backend)
    : file_(file),
      backend_(backend),
      hp_(read_hybrid_hparams(file)),
      weights_(file, backend),
      state_(hp_.n_recurrent_layers(), hp_.conv_state_floats(), hp_.ssm_state_floats()) {
  const bool any_moe = std::find(hp_.moe.begin(), hp_.moe.end(), true) != hp_.moe.end();
  require_ops(backend, hp_.arch, hp_.n_recurrent_layers() > 0, any_moe);
  load_layers();
  uint32_t n_moe = 0;
  for (bool m : hp_.moe) n_moe += m;
  if (n_moe > 0)  // jamba.cpp: build_moe_ffn with softmax gating and norm_w = false
    moe_ = std::make_unique<MoeFfn>(backend, hp_.n_embd, hp_.n_ff, hp_.n_expert, hp_.n_expert_used,
                                    false, n_moe);
  fill_info();
}

JambaModel::~JambaModel() = default;

void JambaModel::load_layers() {
  const int64_t E = hp_.n_embd, V = hp_.n_vocab, F = hp_.n_ff, DI = hp_.d_inner, S = hp_.d_state;
  const int64_t R = hp_.dt_rank, K = hp_.d_conv, X = hp_.n_expert;
  const int64_t KV = int64_t(hp_.head_dim) * hp_.n_head_kv;
  tok_embd_ = &weights_.get("token_embd.weight", {E, V}, Kind::matrix);
  out_norm_ = &weights_.get("output_norm.weight", {E}, Kind::f32);
  output_ = hp_.tied_output ? tok_embd_ : &weights_.get("output.weight", {E, V}, Kind::matrix);
  bool need_ones = false;
  int32_t n_attn = 0, n_recr = 0, n_moe = 0;
  for (uint32_t l = 0; l < hp_.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    Layer L;
    L.recurrent = hp_.recurrent[l];
    L.moe = hp_.moe[l];
    L.attn_norm = &weights_.get(b + "attn_norm.weight", {E}, Kind::f32);
    if (L.recurrent) {
      L.recr_index = n_recr++;
      const sy_tensor& in = weights_.get(b + "ssm_in.weight", {E, 2 * DI}, Kind::matrix);
      L.in_x = WeightMap::rows(in, 0, DI);
      L.in_z = WeightMap::rows(in, DI, DI);
      L.conv_w = &weights_.get(b + "ssm_conv1d.weight", {K, DI}, Kind::f32);
      L.conv_b = &weights_.get(b + "ssm_conv1d.bias", {DI}, Kind::f32);
      const sy_tensor& xp = weights_.get(b + "ssm_x.weight", {DI, R + 2 * S}, Kind::matrix);
      L.x_dt = WeightMap::rows(xp, 0, R);
      L.x_b = WeightMap::rows(xp, R, S);
      L.x_c = WeightMap::rows(xp, R + S, S);
      if (hp_.dt_b_c_norms) {
        L.dt_norm = weights_.find(b + "ssm_dt_norm.weight", {R}, Kind::f32);
        L.b_norm = weights_.find(b + "ssm_b_norm.weight", {S}, Kind::f32);
        L.c_norm = weights_.find(b + "ssm_c_norm.weight", {S}, Kind::f32);
        if (hp_.arch == "jamba" && !(L.dt_norm && L.b_norm && L.c_norm))
          throw std::runtime_error(file_.origin() + ": missing tensor " + b +
                                   "ssm_{dt,b,c}_norm.weight");
        need_ones |= !(L.dt_norm && L.b_norm && L.c_norm);
      }
      L.dt_w = &weights_.get(b + "ssm_dt.weight", {R, DI}, Kind::matrix);
      L.dt_b = &weights_.get(b + "ssm_dt.bias", {DI}, Kind::f32);
      L.a = &weights_.get(b + "ssm_a", {S, DI}, Kind::f32);
      L.d = &weights_.get(b + "ssm_d", {DI}, Kind::f32);
      L.out = &weights_.get(b + "ssm_out.weight", {DI, E}, Kind::matrix);
    } else {
      L.attn_index = n_attn++;
      L.wq = &weights_.get(b + "attn_q.weight", {E, E}, Kind::matrix);
      L.wk = &weights_.get(b + "attn_k.weight", {E, KV}, Kind::matrix);
      L.wv = &weights_.get(b + "attn_v.weight", {E, KV}, Kind::matrix);
      L.wo = &weights_.get(b + "attn_output.weight", {E, E}, Kind::matrix);
    }
    if (hp_.has_ffn) {
      L.ffn_norm = &weights_.get(b + "ffn_norm.weight", {E}, Kind::f32);
      if (L.moe) {
        L.moe_index = n_moe++;
        L.exps.gate_inp = &weights_.get(b + "ffn_gate_inp.weight", {E, X}, Kind::f32);
        L.exps.gate_exps = &weights_.get(b + "ffn_gate_exps.weight", {E, F, X}, Kind::matrix);
        L.exps.up_exps = &weights_.get(b + "ffn_up_exps.weight", {E, F, X}, Kind::matrix);
        L.exps.down_exps = &weights_.get(b + "ffn_down_exps.weight", {F, E, X}, Kind::matrix);
      } else {
        L.gate = &weights_.get(b + "ffn_gate.weight", {E, F}, Kind::matrix);
        L.up = &weights_.get(b + "ffn_up.weight", {E, F}, Kind::matrix);
        L.down = &weights_.get(b + "ffn_down.weight", {F, E}, Kind::matrix);
      }
    }
    layers_.push_back(L);
  }
  if (need_ones) {  // FalconMamba-style dt/B/C norms without weights: multiply by 1
    const std::vector<float> ones(std::max(R, S), 1.0f);
    ones_ = backend_.alloc(ones.size() * sizeof(float));
    ones_->write(0, ones.data(), ones.size() * sizeof(float));
    ones_r_ = make_tensor(*ones_, SY_DTYPE_F32, {R});
    ones_s_ = make_tensor(*ones_, SY_DTYPE_F32, {S});
    for (Layer& L : layers_) {
      if (!L.recurrent) continue;
      if (!L.dt_norm) L.dt_norm = &ones_r_;
      if (!L.b_norm) L.b_norm = &ones_s_;
      if (!L.c_norm) L.c_norm = &ones_s_;
    }
  }
}

void JambaModel::fill_info() {
  info_.arch = hp_.arch;
  info_.n_vocab = hp_.n_vocab;
  info_.n_ctx = hp_.n_ctx;
  info_.n_layer = hp_.n_layer;
  info_.n_attn_layers = hp_.n_attn_layers();
  info_.kv_row_width = info_.n_attn_layers ? hp_.head_dim * hp_.n_head_kv : 0;
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

void JambaModel::reserve_state_slots(uint32_t n_slots) {
  state_.reserve(backend_, n_slots, hp_.d_conv, hp_.d_inner, hp_.d_state);
}

uint64_t JambaModel::activation_bytes() const {
  return (act_ ? act_->size() : 0) + (moe_ ? moe_->scratch_bytes() : 0);
}

void JambaModel::ensure_scratch(uint32_t n_tokens, uint32_t n_out) {
  if (n_tokens <= cap_tokens_ && n_out <= cap_out_) return;
  cap_tokens_ = std::max(cap_tokens_, n_tokens);
  cap_out_ = std::max(cap_out_, n_out);
  const uint64_t T = cap_tokens_, E = hp_.n_embd, F = hp_.n_ff, DI = hp_.d_inner;
  const uint64_t S = hp_.d_state, R = hp_.dt_rank, KV = info_.kv_row_width;
  const bool recr = hp_.n_recurrent_layers() > 0, attn = info_.n_attn_layers > 0;
  ScratchLayout layout;
  auto carve = [&](uint64_t floats) { return layout.carve(floats); };
  off_x_ = carve(E * T);
  off_xn_ = carve(E * T);
  off_mix_ = carve(E * T);
  if (recr) {
    off_u_ = carve(DI * T);
    off_z_ = carve(DI * T);
    off_uc_ = carve(DI * T);
    off_dtr_ = carve(R * T);
    off_b_ = carve(S * T);
    off_c_ = carve(S * T);
    off_dt_ = carve(DI * T);
    off_y_ = carve(DI * T);
  }
  if (attn) {
    off_q_ = carve(E * T);
    off_k_ = carve(KV * T);
    off_v_ = carve(KV * T);
    off_attn_ = carve(E * T);
  }
  if (hp_.has_ffn) {
    off_gate_ = carve(F * T);
    off_up_ = carve(F * T);
  }
  off_sel_ = carve(E * cap_out_);
  off_logits_ = carve(uint64_t(hp_.n_vocab) * cap_out_);
  act_ = backend_.alloc(layout.size());
}

void JambaModel::mamba_mixer(const Layer& L, const Batch& bt, const sy_tensor& xn,
                             const sy_tensor& out) {
  const auto& api = backend_.api();
  sy_backend_t b = backend_.handle();
  const int64_t T = xn.ne[1], DI = hp_.d_inner, S = hp_.d_state, R = hp_.dt_rank;
  const sy_tensor u = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_u_);
  const sy_tensor z = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_z_);
  const sy_tensor uc = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_uc_);
  const sy_tensor dtr = make_tensor(*act_, SY_DTYPE_F32, {R, T}, off_dtr_);
  const sy_tensor bm = make_tensor(*act_, SY_DTYPE_F32, {S, T}, off_b_);
  const sy_tensor cm = make_tensor(*act_, SY_DTYPE_F32, {S, T}, off_c_);
  const sy_tensor dt = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_dt_);
  const sy_tensor y = make_tensor(*act_, SY_DTYPE_F32, {DI, T}, off_y_);
  backend_.check(api.matmul(b, &xn, &L.in_x, &u), "matmul");
  backend_.check(api.matmul(b, &xn, &L.in_z, &z), "matmul");
  const uint32_t r = static_cast<uint32_t>(L.recr_index);
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
    backend_.check(api.ssm_conv(b, &ca), "ssm_conv");
    for (const auto& [from, to] : c.copies) state_.copy_conv(r, from, to);
  }
  backend_.check(api.matmul(b, &uc, &L.x_dt, &dtr), "matmul");
  backend_.check(api.matmul(b, &uc, &L.x_b, &bm), "matmul");
  backend_.check(api.matmul(b, &uc, &L.x_c, &cm), "matmul");
  if (L.dt_norm) {
    backend_.check(api.rms_norm(b, &dtr, L.dt_norm, hp_.rms_eps, &dtr), "rms_norm");
    backend_.check(api.rms_norm(b, &bm, L.b_norm, hp_.rms_eps, &bm), "rms_norm");
    backend_.check(api.rms_norm(b, &cm, L.c_norm, hp_.rms_eps, &cm), "rms_norm");
  }
  backend_.check(api.matmul(b, &dtr, L.dt_w, &dt), "matmul");
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
    backend_.check(api.ssm_scan(b, &sa), "ssm_scan");
    for (const auto& [from, to] : c.copies) state_.copy_ssm(r, from, to);
  }
  backend_.check(api.matmul(b, &y, L.out, &out), "matmul");
}

void JambaModel::attention_mixer(const Layer& L, const Batch& bt, KvCache& cache,
                                 const sy_tensor& xn, const sy_tensor& out) {
  const auto& api = backend_.api();
  sy_backend_t b = backend_.handle();
  const int64_t T = xn.ne[1], D = hp_.head_dim, H = hp_.n_head, HK = hp_.n_head_kv;
  const sy_tensor q = make_tensor(*act_, SY_DTYPE_F32, {D * H, T}, off_q_);
  const sy_tensor q3 = make_tensor(*act_, SY_DTYPE_F32, {D, H, T}, off_q_);
  const sy_tensor k = make_tensor(*act_, SY_DTYPE_F32, {D * HK, T}, off_k_);
  const sy_tensor v = make_tensor(*act_, SY_DTYPE_F32, {D * HK, T}, off_v_);
  const sy_tensor attn = make_tensor(*act_, SY_DTYPE_F32, {D * H, T}, off_attn_);
  const sy_tensor attn3 = make_tensor(*act_, SY_DTYPE_F32, {D, H, T}, off_attn_);
  backend_.check(api.matmul(b, &xn, L.wq, &q), "matmul");
  backend_.check(api.matmul(b, &xn, L.wk, &k), "matmul");
  backend_.check(api.matmul(b, &xn, L.wv, &v), "matmul");
  // No RoPE: Jamba's attention has no positional encoding.
  paged_attention(backend_, bt, cache, static_cast<uint32_t>(L.attn_index), q3, k, v, attn3,
                  static_cast<uint32_t>(HK), 1.0f / std::sqrt(static_cast<float>(D)));
  backend_.check(api.matmul(b, &attn, L.wo, &out), "matmul");
}

std::vector<float> JambaModel::forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                                       bool all_logits) {
  const bool attn = info_.n_attn_layers > 0, recr = hp_.n_recurrent_layers() > 0;
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

  const auto& api = backend_.api();
  sy_backend_t b = backend_.handle();
  const int64_t E = hp_.n_embd, F = hp_.n_ff;
  const sy_tensor x = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_x_);
  const sy_tensor xn = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_xn_);
  const sy_tensor mix = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_mix_);
  const sy_tensor gate = make_tensor(*act_, SY_DTYPE_F32, {F, T}, off_gate_);
  const sy_tensor up = make_tensor(*act_, SY_DTYPE_F32, {F, T}, off_up_);
  const sy_tensor sel = make_tensor(*act_, SY_DTYPE_F32, {E, n_out}, off_sel_);
  const sy_tensor logits = make_tensor(*act_, SY_DTYPE_F32, {hp_.n_vocab, n_out}, off_logits_);

  backend_.check(api.get_rows(b, tok_embd_, bt.ids.data(), T, &x), "get_rows");
  for (uint32_t l = 0; l < hp_.n_layer; ++l) {
    const Layer& L = layers_[l];
    backend_.check(api.rms_norm(b, &x, L.attn_norm, hp_.rms_eps, &xn), "rms_norm");
    if (L.recurrent)
      mamba_mixer(L, bt, xn, mix);
    else
      attention_mixer(L, bt, cache, xn, mix);
    backend_.check(api.add(b, &x, &mix, &x), "add");
    if (!hp_.has_ffn) continue;
    backend_.check(api.rms_norm(b, &x, L.ffn_norm, hp_.rms_eps, &xn), "rms_norm");
    if (L.moe) {
      moe_->forward(static_cast<uint32_t>(L.moe_index), l, L.exps, xn, mix, groups);
    } else {
      swiglu_ffn(backend_, xn, *L.gate, *L.up, *L.down, gate, up, mix);
    }
    backend_.check(api.add(b, &x, &mix, &x), "add");
  }
  std::vector<float> out = output_logits(backend_, bt, x, *out_norm_, hp_.rms_eps, *output_, sel,
                                         logits, *act_, off_logits_);
  if (moe_) moe_->flush_counts();
  return out;
}

}  // namespace sy::model
