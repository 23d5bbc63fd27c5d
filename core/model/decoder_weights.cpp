#include "model/decoder_weights.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "switchyard/common/error.h"

namespace sy::model {
namespace {

using Kind = WeightMap::Kind;

class Binder {
 public:
  Binder(WeightMap& w, const gguf::File& f, const ArchSpec& arch, const DecoderHParams& hp,
         DecoderWeights& out)
      : w_(w), f_(f), rules_(arch.tensors), hp_(hp), out_(out) {}

  const sy_tensor& f32(const std::string& name, std::initializer_list<int64_t> ne) {
    return w_.get(name, ne, Kind::f32);
  }
  const sy_tensor& matrix(const std::string& name, std::initializer_list<int64_t> ne) {
    return w_.get(name, ne, Kind::matrix);
  }

  // A projection `base`.weight {in, out} with its optional bias and `.scale`, and the
  // `.input_scale` llama.cpp's loader takes but none of these graphs applies.
  Linear linear(const std::string& base, int64_t in, int64_t out, bool bias_allowed,
                bool scale_applied, bool bias_first) {
    Linear l;
    l.w = matrix(base + ".weight", {in, out});
    if (bias_allowed)
      if (const sy_tensor* b = w_.find(base + ".bias", {out}, Kind::f32)) {
        l.bias = *b;
        l.has_bias = true;
      }
    l.scale = scale(base, scale_applied);
    l.bias_first = bias_first;
    input_scale(base, {1});
    return l;
  }

  // A projection that only matmul reads, whole (not split into rows): in the backend's layout.
  Linear packed_linear(const std::string& base, int64_t in, int64_t out, bool bias_allowed,
                       bool scale_applied, bool bias_first) {
    Linear l = linear(base, in, out, bias_allowed, scale_applied, bias_first);
    l.w = w_.matmul_only(l.w);
    return l;
  }

  // `base`.scale {1}: its value when the graph applies it, else accepted and listed.
  float scale(const std::string& base, bool applied) {
    if (applied) return w_.scalar(base + ".scale").value_or(1.0f);
    unapplied(base + ".scale", {1});
    return 1.0f;
  }
  // `base`.scale {n_expert} of an expert tensor: llama's graph applies them per expert, which
  // is not implemented; jamba's takes but ignores them.
  void expert_scale(const std::string& base, bool applied) {
    if (applied && f_.find_tensor(base + ".scale"))
      throw Error(f_.origin() + ": tensor " + base +
                  ".scale: per-expert output scales are not implemented");
    unapplied(base + ".scale", {hp_.n_expert});
  }
  void unapplied(const std::string& name, std::initializer_list<int64_t> ne) {
    if (w_.accept(name, ne)) out_.accepted_unapplied.push_back(name);
  }
  void input_scale(const std::string& base, std::initializer_list<int64_t> ne) {
    unapplied(base + ".input_scale", ne);
  }

  void attention(const std::string& b, AttentionWeights& a) {
    const int64_t E = hp_.n_embd, Q = hp_.q_width(), KV = hp_.kv_width();
    // build_qkv: q, k and v scale then add their biases, as does build_attn's output.
    if (f_.find_tensor(b + "attn_qkv.weight")) {  // fused (create_tensor_qkv's first choice)
      Linear qkv = linear(b + "attn_qkv", E, Q + 2 * KV, rules_.qkv_bias, true, false);
      a.q = a.k = a.v = qkv;
      a.q.w = WeightMap::rows(qkv.w, 0, Q);
      a.k.w = WeightMap::rows(qkv.w, Q, KV);
      a.v.w = WeightMap::rows(qkv.w, Q + KV, KV);
      if (qkv.has_bias) {
        a.q.bias = WeightMap::span(qkv.bias, 0, Q);
        a.k.bias = WeightMap::span(qkv.bias, Q, KV);
        a.v.bias = WeightMap::span(qkv.bias, Q + KV, KV);
      }
    } else {
      a.q = packed_linear(b + "attn_q", E, Q, rules_.qkv_bias, true, false);
      a.k = packed_linear(b + "attn_k", E, KV, rules_.qkv_bias, true, false);
      a.v = packed_linear(b + "attn_v", E, KV, rules_.qkv_bias, true, false);
    }
    a.o = packed_linear(b + "attn_output", Q, E, rules_.out_bias, true, false);
  }

  void ssm(const std::string& b, SsmWeights& s) {
    const int64_t E = hp_.n_embd, DI = hp_.d_inner, S = hp_.d_state, R = hp_.dt_rank;
    const Linear in = linear(b + "ssm_in", E, 2 * DI, false, rules_.ssm_scale_applied, false);
    s.in_x = s.in_z = in;
    s.in_x.w = WeightMap::rows(in.w, 0, DI);
    s.in_z.w = WeightMap::rows(in.w, DI, DI);
    s.conv_w = &f32(b + "ssm_conv1d.weight", {hp_.d_conv, DI});
    s.conv_b = &f32(b + "ssm_conv1d.bias", {DI});
    const sy_tensor& xp = matrix(b + "ssm_x.weight", {DI, R + 2 * S});
    s.x_dt = WeightMap::rows(xp, 0, R);
    s.x_b = WeightMap::rows(xp, R, S);
    s.x_c = WeightMap::rows(xp, R + S, S);
    if (rules_.ssm_norm_tensors) {
      s.dt_norm = &f32(b + "ssm_dt_norm.weight", {R});
      s.b_norm = &f32(b + "ssm_b_norm.weight", {S});
      s.c_norm = &f32(b + "ssm_c_norm.weight", {S});
    } else if (hp_.dt_b_c_norms) {
      out_.needs_norm_ones = true;  // the model supplies unit weights
    }
    s.dt_w = &matrix(b + "ssm_dt.weight", {R, DI});
    s.dt_b = &f32(b + "ssm_dt.bias", {DI});
    s.a = &f32(b + "ssm_a", {S, DI});
    s.d = &f32(b + "ssm_d", {DI});
    s.out = packed_linear(b + "ssm_out", DI, E, false, rules_.ssm_scale_applied, false);
  }

  void ffn(const std::string& b, FfnKind kind, FfnWeights& w) {
    const int64_t E = hp_.n_embd, F = hp_.n_ff, X = hp_.n_expert;
    if (kind == FfnKind::dense) {  // build_ffn: add the bias, then scale
      const bool bias = rules_.ffn_bias, applied = rules_.ffn_scale_applied;
      w.gate = packed_linear(b + "ffn_gate", E, F, bias, applied, true);
      w.up = packed_linear(b + "ffn_up", E, F, bias, applied, true);
      w.down = packed_linear(b + "ffn_down", F, E, bias, applied, true);
      return;
    }
    w.exps.gate_inp = &f32(b + "ffn_gate_inp.weight", {E, X});
    w.exps.gate_exps = &matrix(b + "ffn_gate_exps.weight", {E, F, X});
    w.exps.up_exps = &matrix(b + "ffn_up_exps.weight", {E, F, X});
    w.exps.down_exps = &matrix(b + "ffn_down_exps.weight", {F, E, X});
    for (const char* e : {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"}) {
      expert_scale(b + e, rules_.exps_scale_applied);
      input_scale(b + e, {X});
    }
  }

 private:
  WeightMap& w_;
  const gguf::File& f_;
  const ArchTensorRules& rules_;
  const DecoderHParams& hp_;
  DecoderWeights& out_;
};

// "tensor X is not ..." for the first tensor nothing took, and how many more there are.
[[noreturn]] void refuse_unused(const gguf::File& f, const std::string& arch,
                                const std::vector<std::string>& left) {
  std::string msg = f.origin() + ": tensor " + left[0] + " is not used by the " + arch +
                    " architecture (not in llama.cpp's tensor table for it either); refusing "
                    "the file rather than ignoring the tensor";
  if (left.size() > 1) {
    msg += " (" + std::to_string(left.size() - 1) + " more unused:";
    for (size_t i = 1; i < left.size() && i < 5; ++i) msg += " " + left[i];
    msg += left.size() > 5 ? " ...)" : ")";
  }
  throw Error(msg);
}

}  // namespace

bool DecoderWeights::any_epilogue() const {
  for (const LayerWeights& l : layers) {
    for (const Linear* p : {&l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o, &l.ssm.in_x, &l.ssm.in_z,
                            &l.ssm.out, &l.ffn.gate, &l.ffn.up, &l.ffn.down})
      if (p->has_epilogue()) return true;
  }
  return false;
}

DecoderWeights bind_weights(WeightMap& weights, const gguf::File& file, const ArchSpec& arch,
                            const DecoderHParams& hp) {
  DecoderWeights out;
  Binder bind(weights, file, arch, hp, out);
  const int64_t E = hp.n_embd, V = hp.n_vocab;
  out.tok_embd = &bind.matrix("token_embd.weight", {E, V});
  out.out_norm = &bind.f32("output_norm.weight", {E});
  out.output = hp.tied_output ? out.tok_embd : &bind.matrix("output.weight", {E, V});
  if (!hp.tied_output) out.output = &weights.matmul_only(*out.output);
  if (arch.tensors.rope_freqs)
    out.rope_freqs = weights.find("rope_freqs.weight", {hp.rope.n_rot / 2}, WeightMap::Kind::f32);
  uint32_t n_attn = 0, n_recr = 0, n_moe = 0;
  for (uint32_t l = 0; l < hp.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    LayerWeights L;
    L.spec = hp.layers[l];
    L.attn_norm = &bind.f32(b + "attn_norm.weight", {E});
    if (L.spec.mixer == Mixer::attention) {
      L.attn.cache_layer = n_attn++;
      bind.attention(b, L.attn);
    } else {
      L.ssm.state_layer = n_recr++;
      bind.ssm(b, L.ssm);
    }
    if (L.spec.ffn != FfnKind::none) {
      L.ffn_norm = &bind.f32(b + "ffn_norm.weight", {E});
      if (L.spec.ffn == FfnKind::moe) L.ffn.moe_index = n_moe++;
      bind.ffn(b, L.spec.ffn, L.ffn);
    }
    out.layers.push_back(L);
  }
  const auto left = weights.unused();
  if (!left.empty()) refuse_unused(file, hp.arch, left);
  return out;
}

}  // namespace sy::model
