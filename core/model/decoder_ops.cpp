#include "model/decoder_ops.h"
#include "switchyard/common/error.h"

#include <stdexcept>

namespace sy::model {

void require_ops(const Backend& backend, const std::string& arch, const OpNeeds& needs) {
  const std::vector<std::string> missing = backend.missing_ops(needs);
  if (missing.empty()) return;
  std::string names;
  for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
  throw Error(SY_ERR_UNSUPPORTED, "backend " + backend.plugin().name() + " lacks ops the " + arch +
                                      " model needs: " + names);
}

void apply_linear(Backend& backend, const Linear& l, const sy_tensor& x, const sy_tensor& y) {
  backend.matmul(&x, &l.w, &y);
  if (!l.has_epilogue()) return;
  sy_bias_scale_args a{};
  a.struct_size = sizeof a;
  a.order = l.bias_first ? SY_BIAS_THEN_SCALE : SY_SCALE_THEN_BIAS;
  a.x = &y;
  a.bias = l.has_bias ? &l.bias : nullptr;
  a.y = &y;
  a.scale = l.scale;
  backend.bias_scale(&a);
}

void apply_rope(Backend& backend, const RopeParams& rope, const sy_tensor* freq_factors,
                const sy_tensor& x3, const int32_t* pos) {
  if (rope.plain() && !freq_factors) {
    backend.rope(&x3, pos, rope.n_rot, rope.freq_base, rope.freq_scale, SY_ROPE_NORM);
    return;
  }
  sy_rope_ext_args a{};
  a.struct_size = sizeof a;
  a.mode = SY_ROPE_NORM;
  a.x = &x3;
  a.pos = pos;
  a.freq_factors = freq_factors;
  a.n_rot = rope.n_rot;
  a.n_ctx_orig = rope.n_ctx_orig;
  a.freq_base = rope.freq_base;
  a.freq_scale = rope.freq_scale;
  a.ext_factor = rope.ext_factor;
  a.attn_factor = rope.attn_factor;
  a.beta_fast = rope.beta_fast;
  a.beta_slow = rope.beta_slow;
  backend.rope_ext(&a);
}

void paged_attention(Backend& backend, const FlatBatch& bt, KvCache& cache, uint32_t layer,
                     const sy_tensor& q3, const sy_tensor& k, const sy_tensor& v,
                     const sy_tensor& out3, uint32_t n_kv_head, float scale) {
  const sy_kv_store_args st{sizeof(sy_kv_store_args), &k, &v, &cache.k(layer), &cache.v(layer),
                            bt.kv_slots.data()};
  backend.kv_store(&st);
  sy_attention_args aa{};
  aa.struct_size = sizeof(aa);
  aa.q = &q3;
  aa.k_cache = &cache.k(layer);
  aa.v_cache = &cache.v(layer);
  aa.out = &out3;
  aa.n_kv_head = n_kv_head;
  aa.n_seqs = bt.n_seqs;
  aa.seq_token_start = bt.seq_start.data();
  aa.token_pos = bt.pos.data();
  aa.block_tables = bt.tables.data();
  aa.max_blocks_per_seq = bt.max_blocks;
  aa.block_size = cache.block_size();
  aa.scale = scale;
  backend.attention(&aa);
}

void swiglu_ffn(Backend& backend, const sy_tensor& xn, const Linear& w_gate, const Linear& w_up,
                const Linear& w_down, const sy_tensor& gate, const sy_tensor& up,
                const sy_tensor& out) {
  apply_linear(backend, w_gate, xn, gate);
  apply_linear(backend, w_up, xn, up);
  backend.swiglu(&gate, &up, &gate);
  apply_linear(backend, w_down, gate, out);
}

std::vector<float> output_logits(Backend& backend, const FlatBatch& bt, const sy_tensor& x,
                                 const sy_tensor& out_norm, float rms_eps, const sy_tensor& output,
                                 const sy_tensor& sel, const sy_tensor& logits, Buffer& act,
                                 uint64_t logits_offset) {
  const uint32_t n_out = bt.n_out();
  std::vector<float> out(static_cast<size_t>(n_out) * logits.ne[0]);
  if (n_out > 0) {
    // Only the rows that need logits go through the output norm and the vocab projection.
    backend.get_rows(&x, bt.out_rows.data(), n_out, &sel);
    backend.rms_norm(&sel, &out_norm, rms_eps, &sel);
    backend.matmul(&sel, &output, &logits);
  }
  backend.synchronize();
  if (n_out > 0) act.read(logits_offset, out.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace sy::model
