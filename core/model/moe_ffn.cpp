#include "model/moe_ffn.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "host/host_api.h"

namespace sy::model {

std::vector<TokenGroup> token_groups(const std::vector<SeqInput>& seqs, uint32_t n_expert,
                                     uint32_t default_k) {
  std::vector<TokenGroup> groups;
  uint32_t t = 0;
  for (const SeqInput& s : seqs) {
    if (s.n_expert_used < 0 || s.n_expert_used > static_cast<int32_t>(n_expert))
      throw std::invalid_argument("forward: n_expert_used " + std::to_string(s.n_expert_used) +
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

MoeFfn::MoeFfn(Backend& backend, uint32_t n_embd, uint32_t n_ff, uint32_t n_expert, uint32_t n_used,
               bool normalize, uint32_t n_moe_layers)
    : b_(backend),
      E_(n_embd),
      F_(n_ff),
      X_(n_expert),
      n_used_(n_used),
      n_moe_layers_(n_moe_layers),
      normalize_(normalize) {}

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
  off_down_ = carve(uint64_t(E_) * k * T);
  act_ = b_.alloc(off);
}

void MoeFfn::forward(uint32_t moe_layer, uint32_t layer, const MoeWeights& w, const sy_tensor& x,
                     const sy_tensor& y, const std::vector<TokenGroup>& groups) {
  const int64_t E = E_, F = F_, X = X_;
  const int64_t T = x.ne[1];
  const sy_tensor logits = make_tensor(*act_, SY_DTYPE_F32, {X, T}, off_logits_);
  b_.matmul(&x, w.gate_inp, &logits);
  for (const TokenGroup& g : groups) {
    const int64_t n = g.n, k = g.k;
    const uint64_t ids_off =
        off_ids_ + (uint64_t(moe_layer) * cap_ * cap_k_ + uint64_t(g.t0) * cap_k_) * 4;
    const sy_tensor lg = make_tensor(*act_, SY_DTYPE_F32, {X, n}, off_logits_ + g.t0 * X * 4);
    const sy_tensor ids = make_tensor(*act_, SY_DTYPE_I32, {k, n}, ids_off);
    const sy_tensor wt = make_tensor(*act_, SY_DTYPE_F32, {k, n}, off_w_);
    const sy_moe_gate_args ga{sizeof ga, SY_MOE_GATING_SOFTMAX, &lg, &ids,
                              &wt,       normalize_ ? 1u : 0u,  1.0f};
    b_.moe_gate(&ga);
    pending_.push_back({layer, ids_off, g.k, g.n});

    sy_tensor xg = x;  // {E, 1, n}: every slot of a token reads the same input row
    xg.offset += g.t0 * E * 4;
    xg.ne[1] = 1, xg.ne[2] = n;
    sy_tensor yg = y;
    yg.offset += g.t0 * E * 4;
    yg.ne[1] = n;
    const sy_tensor gate = make_tensor(*act_, SY_DTYPE_F32, {F, k, n}, off_gate_);
    const sy_tensor up = make_tensor(*act_, SY_DTYPE_F32, {F, k, n}, off_up_);
    const sy_tensor down = make_tensor(*act_, SY_DTYPE_F32, {E, k, n}, off_down_);
    const sy_moe_matmul_args mg{sizeof mg, 0, &xg, w.gate_exps, &ids, &gate};
    const sy_moe_matmul_args mu{sizeof mu, 0, &xg, w.up_exps, &ids, &up};
    const sy_moe_matmul_args md{sizeof md, 0, &gate, w.down_exps, &ids, &down};
    b_.moe_matmul(&mg);
    b_.moe_matmul(&mu);
    b_.swiglu(&gate, &up, &gate);
    b_.moe_matmul(&md);
    b_.moe_combine(&down, &wt, &yg);
  }
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
