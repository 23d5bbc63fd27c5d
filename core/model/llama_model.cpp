#include "model/llama_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gguf/gguf.h"
#include "model/decoder_ops.h"

namespace sy::model {

LlamaModel::LlamaModel(const gguf::File& file, Backend& backend)
    : backend_(backend), hp_(read_llama_hparams(file)), weights_(file, backend) {
  require_ops(backend, "llama", false, hp_.n_expert > 0);
  const int64_t E = hp_.n_embd, V = hp_.n_vocab, F = hp_.n_ff;
  const int64_t Q = int64_t(hp_.head_dim) * hp_.n_head, KV = int64_t(hp_.head_dim) * hp_.n_head_kv;
  tok_embd_ = &weight("token_embd.weight", {E, V});
  out_norm_ = &weight("output_norm.weight", {E});
  output_ = hp_.tied_output ? tok_embd_ : &weight("output.weight", {E, V});
  const int64_t X = hp_.n_expert;
  for (uint32_t l = 0; l < hp_.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    if (X > 0) {  // Mixtral: the dense FFN tensors are absent; the expert ones are 3-D
      Layer L{weight(b + "attn_norm.weight", {E}),
              weight(b + "attn_q.weight", {E, Q}),
              weight(b + "attn_k.weight", {E, KV}),
              weight(b + "attn_v.weight", {E, KV}),
              weight(b + "attn_output.weight", {Q, E}),
              weight(b + "ffn_norm.weight", {E}),
              {},
              {},
              {}};
      L.exps = MoeWeights{&weights_.get(b + "ffn_gate_inp.weight", {E, X}, WeightMap::Kind::f32),
                          &weight(b + "ffn_gate_exps.weight", {E, F, X}),
                          &weight(b + "ffn_up_exps.weight", {E, F, X}),
                          &weight(b + "ffn_down_exps.weight", {F, E, X})};
      layers_.push_back(L);
      continue;
    }
    layers_.push_back(
        Layer{weight(b + "attn_norm.weight", {E}), weight(b + "attn_q.weight", {E, Q}),
              weight(b + "attn_k.weight", {E, KV}), weight(b + "attn_v.weight", {E, KV}),
              weight(b + "attn_output.weight", {Q, E}), weight(b + "ffn_norm.weight", {E}),
              weight(b + "ffn_gate.weight", {E, F}), weight(b + "ffn_up.weight", {E, F}),
              weight(b + "ffn_down.weight", {F, E})});
  }
  // llama.cpp's llama graph: build_moe_ffn with softmax gating and norm_w = true (Mixtral).
  if (X > 0)
    moe_ = std::make_unique<MoeFfn>(backend, hp_.n_embd, hp_.n_ff, hp_.n_expert, hp_.n_expert_used,
                                    true, hp_.n_layer);
  info_.arch = hp_.arch;
  info_.n_vocab = hp_.n_vocab;
  info_.n_ctx = hp_.n_ctx;
  info_.n_layer = info_.n_attn_layers = hp_.n_layer;
  info_.kv_row_width = hp_.head_dim * hp_.n_head_kv;
  for (const auto& t : file.tensors()) {
    info_.weight_bytes += t.nbytes;
    info_.n_params += static_cast<uint64_t>(t.n_elements());
  }
  info_.n_active_params = info_.n_params;
  // A decode token reads every matrix once; the embedding only for its one row unless it is
  // also the output matrix.
  const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
  info_.bytes_per_token = info_.weight_bytes - (hp_.tied_output ? 0 : embd->nbytes);
  if (X > 0) {  // and only the selected experts
    info_.n_expert = hp_.n_expert;
    info_.n_expert_used = hp_.n_expert_used;
    const double idle = 1.0 - double(hp_.n_expert_used) / hp_.n_expert;
    for (const auto& t : file.tensors())
      if (t.name.find("_exps.weight") != std::string::npos) {
        info_.n_active_params -= static_cast<uint64_t>(t.n_elements() * idle);
        info_.bytes_per_token -= static_cast<uint64_t>(t.nbytes * idle);
      }
  }
}

uint64_t LlamaModel::activation_bytes() const {
  return (act_ ? act_->size() : 0) + (moe_ ? moe_->scratch_bytes() : 0);
}

LlamaModel::~LlamaModel() = default;

const sy_tensor& LlamaModel::weight(const std::string& name, std::initializer_list<int64_t> ne) {
  return weights_.get(name, ne, ne.size() == 1 ? WeightMap::Kind::f32 : WeightMap::Kind::matrix);
}

void LlamaModel::ensure_scratch(uint32_t n_tokens, uint32_t n_out) {
  if (n_tokens <= cap_tokens_ && n_out <= cap_out_) return;
  cap_tokens_ = std::max(cap_tokens_, n_tokens);
  cap_out_ = std::max(cap_out_, n_out);
  const uint64_t T = cap_tokens_, E = hp_.n_embd, F = hp_.n_ff;
  const uint64_t Q = uint64_t(hp_.head_dim) * hp_.n_head, KV = info_.kv_row_width;
  ScratchLayout layout;
  auto carve = [&](uint64_t floats) { return layout.carve(floats); };
  off_x_ = carve(E * T);
  off_xn_ = carve(E * T);
  off_q_ = carve(Q * T);
  off_k_ = carve(KV * T);
  off_v_ = carve(KV * T);
  off_attn_ = carve(Q * T);
  off_gate_ = carve(F * T);
  off_up_ = carve(F * T);
  off_sel_ = carve(E * cap_out_);
  off_logits_ = carve(uint64_t(hp_.n_vocab) * cap_out_);
  act_ = backend_.alloc(layout.size());
}

std::vector<float> LlamaModel::forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                                       bool all_logits) {
  const FlatBatch bt = flatten_batch(seqs, cache.block_size(), hp_.n_vocab, all_logits, true);
  const uint32_t T = bt.n_tokens();
  const uint32_t n_out = bt.n_out();
  if (T == 0) return {};
  ensure_scratch(T, std::max<uint32_t>(n_out, 1));
  std::vector<TokenGroup> groups;
  if (moe_) {
    groups = token_groups(seqs, hp_.n_expert, hp_.n_expert_used);
    uint32_t max_k = 1;
    for (const auto& g : groups) max_k = std::max(max_k, g.k);
    moe_->reserve(T, max_k);
  }

  const auto& api = backend_.api();
  sy_backend_t b = backend_.handle();
  const int64_t E = hp_.n_embd, F = hp_.n_ff, D = hp_.head_dim, H = hp_.n_head, HK = hp_.n_head_kv;
  const sy_tensor x = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_x_);
  const sy_tensor xn = make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_xn_);
  const sy_tensor q = make_tensor(*act_, SY_DTYPE_F32, {D * H, T}, off_q_);
  const sy_tensor q3 = make_tensor(*act_, SY_DTYPE_F32, {D, H, T}, off_q_);
  const sy_tensor k = make_tensor(*act_, SY_DTYPE_F32, {D * HK, T}, off_k_);
  const sy_tensor k3 = make_tensor(*act_, SY_DTYPE_F32, {D, HK, T}, off_k_);
  const sy_tensor v = make_tensor(*act_, SY_DTYPE_F32, {D * HK, T}, off_v_);
  const sy_tensor attn = make_tensor(*act_, SY_DTYPE_F32, {D * H, T}, off_attn_);
  const sy_tensor attn3 = make_tensor(*act_, SY_DTYPE_F32, {D, H, T}, off_attn_);
  const sy_tensor gate = make_tensor(*act_, SY_DTYPE_F32, {F, T}, off_gate_);
  const sy_tensor up = make_tensor(*act_, SY_DTYPE_F32, {F, T}, off_up_);
  const sy_tensor sel = make_tensor(*act_, SY_DTYPE_F32, {E, n_out}, off_sel_);
  const sy_tensor logits = make_tensor(*act_, SY_DTYPE_F32, {hp_.n_vocab, n_out}, off_logits_);
  const float scale = hp_.attn_scale > 0 ? hp_.attn_scale : 1.0f / std::sqrt(static_cast<float>(D));

  backend_.check(api.get_rows(b, tok_embd_, bt.ids.data(), T, &x), "get_rows");
  for (uint32_t l = 0; l < hp_.n_layer; ++l) {
    const Layer& L = layers_[l];
    backend_.check(api.rms_norm(b, &x, &L.attn_norm, hp_.rms_eps, &xn), "rms_norm");
    backend_.check(api.matmul(b, &xn, &L.wq, &q), "matmul");
    backend_.check(api.matmul(b, &xn, &L.wk, &k), "matmul");
    backend_.check(api.matmul(b, &xn, &L.wv, &v), "matmul");
    backend_.check(api.rope(b, &q3, bt.pos.data(), hp_.n_rot, hp_.rope_freq_base,
                            hp_.rope_freq_scale, SY_ROPE_NORM),
                   "rope");
    backend_.check(api.rope(b, &k3, bt.pos.data(), hp_.n_rot, hp_.rope_freq_base,
                            hp_.rope_freq_scale, SY_ROPE_NORM),
                   "rope");
    paged_attention(backend_, bt, cache, l, q3, k, v, attn3, static_cast<uint32_t>(HK), scale);
    backend_.check(api.matmul(b, &attn, &L.wo, &xn), "matmul");
    backend_.check(api.add(b, &x, &xn, &x), "add");
    backend_.check(api.rms_norm(b, &x, &L.ffn_norm, hp_.rms_eps, &xn), "rms_norm");
    if (moe_) {  // each token group's output overwrites only its own rows of xn
      moe_->forward(l, l, L.exps, xn, xn, groups);
      backend_.check(api.add(b, &x, &xn, &x), "add");
      continue;
    }
    swiglu_ffn(backend_, xn, L.w_gate, L.w_up, L.w_down, gate, up, xn);
    backend_.check(api.add(b, &x, &xn, &x), "add");
  }
  std::vector<float> out = output_logits(backend_, bt, x, *out_norm_, hp_.rms_eps, *output_, sel,
                                         logits, *act_, off_logits_);
  if (moe_) moe_->flush_counts();
  return out;
}

}  // namespace sy::model
