#include "model/blocks/ops.h"

#include "switchyard/common/error.h"

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
  const uint32_t mode = rope.neox ? SY_ROPE_NEOX : SY_ROPE_NORM;
  if (rope.plain() && !freq_factors) {
    backend.rope(&x3, pos, rope.n_rot, rope.freq_base, rope.freq_scale, mode);
    return;
  }
  sy_rope_ext_args a{};
  a.struct_size = sizeof a;
  a.mode = mode;
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
                     const sy_tensor& out3, uint32_t n_kv_head, float scale, uint32_t window,
                     const sy_tensor* sinks, float softcap) {
  const bool windowed = cache.windowed(layer);  // the sliding-window layers' own pool
  if (k.struct_size) {  // none: the layer reads a cache an earlier layer wrote (Gemma 4)
    const sy_kv_store_args st{sizeof(sy_kv_store_args),
                              &k,
                              &v,
                              &cache.k(layer),
                              &cache.v(layer),
                              (windowed ? bt.window_slots : bt.kv_slots).data()};
    backend.kv_store(&st);
  }
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
  aa.block_tables = (windowed ? bt.window_tables : bt.tables).data();
  aa.max_blocks_per_seq = bt.max_blocks;
  aa.block_size = cache.block_size();
  aa.scale = scale;
  aa.window = window;
  aa.sinks = sinks;
  aa.softcap = softcap;
  backend.attention(&aa);
}

void unary(Backend& backend, uint32_t kind, const sy_tensor& x, const sy_tensor& y) {
  const sy_unary_args a{sizeof(sy_unary_args), kind, &x, &y};
  backend.unary(&a);
}

void scale(Backend& backend, const sy_tensor& x, float s, const sy_tensor& y) {
  sy_bias_scale_args a{};
  a.struct_size = sizeof a;
  a.order = SY_SCALE_THEN_BIAS;
  a.x = &x;
  a.y = &y;
  a.scale = s;
  backend.bias_scale(&a);
}

void norm(Backend& backend, uint32_t kind, const sy_tensor& x, const sy_tensor* w, float eps,
          const sy_tensor& y) {
  sy_norm_args a{};
  a.struct_size = sizeof a;
  a.kind = kind;
  a.x = &x;
  a.w = w;
  a.y = &y;
  a.eps = eps;
  backend.norm(&a);
}

std::vector<float> output_logits(Backend& backend, const FlatBatch& bt, const sy_tensor& x,
                                 const sy_tensor& out_norm, float rms_eps, const sy_tensor& output,
                                 const sy_tensor* output_bias, const sy_tensor& sel,
                                 const sy_tensor& logits, Buffer& logits_buf, float logit_scale,
                                 float softcap) {
  const uint32_t n_out = bt.n_out();
  std::vector<float> out(static_cast<size_t>(n_out) * logits.ne[0]);
  if (n_out > 0) {
    // Only the rows that need logits go through the output norm and the vocab projection.
    backend.get_rows(&x, bt.out_rows.data(), n_out, &sel);
    backend.rms_norm(&sel, &out_norm, rms_eps, &sel);
    backend.matmul(&sel, &output, &logits);
    if (output_bias || logit_scale != 0.0f) {
      sy_bias_scale_args a{};
      a.struct_size = sizeof a;
      a.order = SY_BIAS_THEN_SCALE;
      a.x = a.y = &logits;
      a.bias = output_bias;
      a.scale = logit_scale != 0.0f ? 1.0f / logit_scale : 1.0f;
      backend.bias_scale(&a);
    }
    if (softcap != 0.0f) {
      scale(backend, logits, 1.0f / softcap, logits);
      unary(backend, SY_UNARY_TANH, logits, logits);
      scale(backend, logits, softcap, logits);
    }
  }
  backend.synchronize();
  if (n_out > 0) logits_buf.read(logits.offset, out.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace sy::model
