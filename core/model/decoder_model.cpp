#include "model/decoder_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "gguf/gguf.h"
#include "host/log.h"
#include "model/blocks/ops.h"
#include "model/load_table.h"
#include "model/ssm_calls.h"
#include "switchyard/common/error.h"

namespace sy::model {
namespace {

const Arch& arch_of(const ModelDesc& d) {
  const Arch* a = find_arch(d.arch);
  if (!a) throw sy::Bug("no descriptor for " + d.arch);
  return *a;
}

ModelWeights bind(WeightMap& weights, const gguf::File& file, const Arch& arch,
                  const ModelDesc& d) {
  ModelWeights w;
  LoadTable table(weights, file, w.accepted_unapplied);
  arch.tensors(table, d, w);
  table.refuse_unused(d.arch);
  return w;
}

}  // namespace

bool ModelWeights::any_epilogue() const {
  for (const LayerWeights& l : layers) {
    for (const Linear* p :
         {&l.attn.q,          &l.attn.k,        &l.attn.v,          &l.attn.o,    &l.attn.gate,
          &l.ssm.in_x,        &l.ssm.in_z,      &l.ssm.out,         &l.ssm2.in_z, &l.ssm2.in_xbc,
          &l.ssm2.in_dt,      &l.ssm2.out,      &l.gdn.qkv,         &l.gdn.z,     &l.gdn.beta,
          &l.gdn.alpha,       &l.gdn.out,       &l.ffn.gate,        &l.ffn.up,    &l.ffn.down,
          &l.moe.shared.gate, &l.moe.shared.up, &l.moe.shared.down, &l.moe.router})
      if (p->has_epilogue()) return true;
  }
  return false;
}

DecoderModel::DecoderModel(const gguf::File& file, Backend& backend)
    : file_(file),
      backend_(backend),
      d_(read_model_desc(file)),
      arch_(arch_of(d_)),
      weights_(file, backend),
      w_(bind(weights_, file, arch_, d_)),
      state_(d_.n_recurrent_layers(), d_.conv_state_floats(), d_.ssm_state_floats()) {
  require_ops(backend, d_.arch, op_needs());
  if (!w_.accepted_unapplied.empty()) {
    std::string names;
    for (size_t i = 0; i < w_.accepted_unapplied.size() && i < 4; ++i)
      names += (i ? ", " : "") + w_.accepted_unapplied[i];
    logger()->warn(
        "{}: {} tensors are taken as llama.cpp's loader takes them but not applied, as its {} "
        "graph does not apply them: {}{}",
        file.origin(), w_.accepted_unapplied.size(), d_.arch, names,
        w_.accepted_unapplied.size() > 4 ? ", ..." : "");
  }
  if (d_.n_moe_layers() > 0) moe_ = std::make_unique<MoeFfn>(backend, d_);
  if (d_.dt_b_c_norms) {  // FalconMamba-style dt/B/C norms without weights: multiply by 1
    const int64_t R = d_.dt_rank, S = d_.d_state;
    const std::vector<float> ones(std::max(R, S), 1.0f);
    ones_ = backend_.alloc(ones.size() * sizeof(float));
    ones_->write(0, ones.data(), ones.size() * sizeof(float));
    ones_r_ = make_tensor(*ones_, SY_DTYPE_F32, {R});
    ones_s_ = make_tensor(*ones_, SY_DTYPE_F32, {S});
    for (LayerWeights& L : w_.layers) {
      if (L.spec.mixer != Mixer::ssm || L.ssm.dt_norm) continue;
      L.ssm.dt_norm = &ones_r_;
      L.ssm.b_norm = L.ssm.c_norm = &ones_s_;
    }
  }
  fill_info();
}

DecoderModel::~DecoderModel() = default;

OpNeeds DecoderModel::op_needs() const {
  OpNeeds n;
  bool rope_ext = false;
  for (const LayerWeights& L : w_.layers) {
    const Mixer m = L.spec.mixer;
    n.ssm |= m == Mixer::ssm || m == Mixer::ssm2 || m == Mixer::gdn || m == Mixer::shortconv ||
             m == Mixer::parallel;  // ssm_conv is in the Mamba-1 group
    n.ssm2 |= m == Mixer::ssm2 || m == Mixer::parallel;
    n.norm |= (m == Mixer::ssm2 || m == Mixer::parallel) && L.ssm2.norm;
    n.gated_delta_net |= m == Mixer::gdn;
    n.mul |= m == Mixer::shortconv || L.attn.gate.present() || L.moe.shared_gate;
    const bool geglu = d_.ffn_act == FfnAct::geglu && L.spec.ffn == FfnKind::dense;
    n.unary_1_6 |= geglu;
    n.mul |= geglu;
    n.unary |= L.attn.gate.present() || L.moe.shared_gate || geglu ||
               (d_.ffn_act == FfnAct::relu_sqr && L.spec.ffn != FfnKind::none) ||
               (L.spec.ffn == FfnKind::moe && !L.moe.gate_exps.struct_size);
    n.moe |= L.spec.ffn == FfnKind::moe;
    if (L.spec.ffn == FfnKind::moe) {
      n.moe_routing_1_5 |= d_.moe_gating == MoeGating::sigmoid || L.moe.selection_bias;
      n.moe_experts_1_5 |= L.moe.expert_stride || L.moe.gate_scale || L.moe.up_scale ||
                           L.moe.down_scale || L.moe.up_bias;
      n.swiglu_oai |= d_.ffn_act == FfnAct::swiglu_oai;
    }
    rope_ext |= L.spec.has_attention();
    n.mul |= L.out_scale != nullptr;
    n.norm |= L.spec.has_attention() && d_.v_norm;
    n.attention_sinks |= L.attn.sinks != nullptr;
  }
  n.attention_window = d_.window > 0;
  n.attention_softcap = d_.attn_softcap != 0.0f;
  n.rope_ext = rope_ext && d_.rope.enabled && (!d_.rope.plain() || w_.rope_freqs != nullptr);
  n.bias_scale = w_.any_epilogue() || d_.embedding_scale != 0.0f || d_.residual_scale != 0.0f ||
                 d_.logit_scale != 0.0f || w_.output_bias;
  n.mul |= d_.attn_temp_scale != 0.0f;
  n.unary_1_6 |= d_.logit_softcap != 0.0f;
  n.unary |= d_.logit_softcap != 0.0f;
  n.bias_scale |= d_.logit_softcap != 0.0f;
  return n;
}

void DecoderModel::fill_info() {
  info_.arch = d_.arch;
  info_.n_vocab = d_.n_vocab;
  info_.n_ctx = d_.n_ctx;
  info_.n_layer = d_.n_layer;
  info_.n_attn_layers = d_.n_attn_layers();
  info_.kv_row_widths = d_.kv_widths();
  info_.kv_windows = d_.kv_windows();
  for (uint32_t w : info_.kv_row_widths) info_.kv_row_width = std::max(info_.kv_row_width, w);
  info_.state_bytes_per_seq = state_.bytes_per_seq();
  info_.n_expert = moe_ ? d_.n_expert : 0;
  info_.n_expert_used = moe_ ? d_.n_expert_used : 0;
  uint64_t idle_params = 0, idle_bytes = 0;  // unselected experts of one token
  for (const auto& t : file_.tensors()) {
    info_.weight_bytes += t.nbytes;
    info_.n_params += static_cast<uint64_t>(t.n_elements());
    if (moe_ && t.name.find("_exps.weight") != std::string::npos) {
      const double idle = 1.0 - double(d_.n_expert_used) / d_.n_expert;
      idle_params += static_cast<uint64_t>(t.n_elements() * idle);
      idle_bytes += static_cast<uint64_t>(t.nbytes * idle);
    }
  }
  info_.n_active_params = info_.n_params - idle_params;
  // A decode token reads every matrix once except the unselected experts; the embedding only
  // for its one row unless it is also the output matrix.
  const gguf::TensorInfo* embd = file_.find_tensor(names::tensor(names::Tensor::token_embd));
  info_.bytes_per_token = info_.weight_bytes - idle_bytes - (d_.tied_output ? 0 : embd->nbytes);
}

void DecoderModel::reserve_state_slots(uint32_t n_slots) {
  state_.reserve(backend_, n_slots, d_.d_conv, d_.conv_channels(), d_.d_state, d_.d_inner);
}

uint64_t DecoderModel::activation_bytes() const {
  return (act_ ? act_->size() : 0) + scratch_.bytes() + (moe_ ? moe_->scratch_bytes() : 0);
}

void DecoderModel::ensure_buffers(uint32_t n_tokens, uint32_t n_out) {
  if (n_tokens <= cap_tokens_ && n_out <= cap_out_) return;
  cap_tokens_ = std::max(cap_tokens_, n_tokens);
  cap_out_ = std::max(cap_out_, n_out);
  const uint64_t T = cap_tokens_, E = d_.n_embd;
  uint64_t size = 0;
  auto carve = [&](uint64_t floats) {
    const uint64_t at = size;
    size += (floats * 4 + 63) / 64 * 64;
    return at;
  };
  carve(E * T);  // the residual stream at offset 0
  off_xn_ = carve(E * T);
  off_mix_ = carve(E * T);
  off_sel_ = carve(E * cap_out_);
  off_logits_ = carve(uint64_t(d_.n_vocab) * cap_out_);
  off_temp_ = carve(T);
  off_ple_ = carve(uint64_t(d_.n_embd_per_layer) * d_.n_layer * T);
  act_ = backend_.alloc(size);
  scratch_.reserve(backend_, arch_.scratch_per_token(d_) * T + 1024);
}

std::vector<float> DecoderModel::forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                                         bool all_logits) {
  const bool attn = d_.n_attn_layers() > 0, recr = d_.n_recurrent_layers() > 0;
  PassBatch bt;
  static_cast<FlatBatch&>(bt) =
      flatten_batch(seqs, cache.block_size(), d_.n_vocab, all_logits, attn, cache.window());
  if (recr) {
    std::set<int32_t> used_slots;
    for (const SeqInput& s : seqs) {
      if (s.state_slot < 0 || static_cast<uint32_t>(s.state_slot) >= state_.n_slots())
        throw sy::Bug("forward: state_slot " + std::to_string(s.state_slot) + " outside the " +
                      std::to_string(state_.n_slots()) + " reserved recurrent-state slots");
      if (!used_slots.insert(s.state_slot).second)
        throw sy::Bug("forward: two sequences share state_slot " + std::to_string(s.state_slot));
      bt.state_slots.push_back(s.state_slot);
    }
    check_snapshot_slots(seqs, used_slots, state_.n_slots());
    bt.ssm = ssm_calls(seqs);
  }
  std::vector<TokenGroup> groups;
  if (moe_) groups = token_groups(seqs, d_.n_expert, d_.n_expert_used);
  const uint32_t T = bt.n_tokens();
  const uint32_t n_out = bt.n_out();
  if (T == 0) return {};
  // A sequence at position 0 is new to its slot (admission or recompute): forget the previous
  // owner's state. A prefix-cache hit resumes from a snapshot of the state at pos0 instead.
  if (recr)
    for (const auto& s : seqs) {
      if (s.pos0 == 0) state_.reset(static_cast<uint32_t>(s.state_slot));
      if (s.restore_from >= 0)
        state_.copy(static_cast<uint32_t>(s.restore_from), static_cast<uint32_t>(s.state_slot));
    }
  ensure_buffers(T, std::max<uint32_t>(n_out, 1));
  if (moe_) {
    uint32_t max_k = 1;
    for (const auto& g : groups) max_k = std::max(max_k, g.k);
    moe_->reserve(T, max_k);
  }

  const int64_t E = d_.n_embd;
  LayerPass p{backend_,
              d_,
              w_,
              bt,
              cache,
              state_,
              moe_.get(),
              groups,
              scratch_,
              make_tensor(*act_, SY_DTYPE_F32, {E, T}, 0),
              make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_xn_),
              make_tensor(*act_, SY_DTYPE_F32, {E, T}, off_mix_)};
  const sy_tensor sel = make_tensor(*act_, SY_DTYPE_F32, {E, n_out}, off_sel_);
  const sy_tensor logits = make_tensor(*act_, SY_DTYPE_F32, {d_.n_vocab, n_out}, off_logits_);
  if (d_.attn_temp_scale != 0.0f) {  // llm_graph_input_attn_temp, one value per token
    std::vector<float> temp(T);
    for (uint32_t t = 0; t < T; ++t)
      temp[t] = static_cast<float>(
          std::log(std::floor((static_cast<float>(bt.pos[t]) + d_.attn_temp_offset) /
                              static_cast<float>(d_.attn_temp_floor)) +
                   1.0) *
              d_.attn_temp_scale +
          1.0);
    act_->write(off_temp_, temp.data(), T * sizeof(float));
    p.q_temp = make_tensor(*act_, SY_DTYPE_F32, {1, T}, off_temp_);
  }

  if (d_.n_embd_per_layer)
    p.per_layer =
        make_tensor(*act_, SY_DTYPE_F32, {d_.n_embd_per_layer, int64_t(T) * d_.n_layer}, off_ple_);

  backend_.get_rows(w_.tok_embd, bt.ids.data(), T, &p.x);
  if (d_.embedding_scale != 0.0f) scale(backend_, p.x, d_.embedding_scale, p.x);
  scratch_.reset();
  arch_.begin(p);
  scratch_.reset();
  for (uint32_t l = 0; l < d_.n_layer - d_.n_nextn; ++l) arch_.layer(p, w_.layers[l], l);
  std::vector<float> out =
      output_logits(backend_, bt, p.x, *w_.out_norm, d_.rms_eps, w_.output, w_.output_bias, sel,
                    logits, *act_, d_.logit_scale, d_.logit_softcap);
  if (moe_) moe_->flush_counts();
  return out;
}

}  // namespace sy::model
