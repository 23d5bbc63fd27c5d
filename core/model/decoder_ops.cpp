#include "model/decoder_ops.h"

#include <stdexcept>

namespace sy::model {

void require_ops(const Backend& backend, const std::string& arch, bool recurrent, bool moe) {
  std::vector<std::string> missing = backend.missing_ops();
  for (auto& m : backend.missing_hybrid_ops(recurrent, moe)) missing.push_back(m);
  if (missing.empty()) return;
  std::string names;
  for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
  throw std::runtime_error("backend " + backend.plugin().name() + " lacks ops the " + arch +
                           " model needs: " + names);
}

void paged_attention(Backend& backend, const FlatBatch& bt, KvCache& cache, uint32_t layer,
                     const sy_tensor& q3, const sy_tensor& k, const sy_tensor& v,
                     const sy_tensor& out3, uint32_t n_kv_head, float scale) {
  const auto& api = backend.api();
  sy_backend_t b = backend.handle();
  const sy_kv_store_args st{sizeof(sy_kv_store_args), &k, &v, &cache.k(layer), &cache.v(layer),
                            bt.kv_slots.data()};
  backend.check(api.kv_store(b, &st), "kv_store");
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
  backend.check(api.attention(b, &aa), "attention");
}

void swiglu_ffn(Backend& backend, const sy_tensor& xn, const sy_tensor& w_gate,
                const sy_tensor& w_up, const sy_tensor& w_down, const sy_tensor& gate,
                const sy_tensor& up, const sy_tensor& out) {
  const auto& api = backend.api();
  sy_backend_t b = backend.handle();
  backend.check(api.matmul(b, &xn, &w_gate, &gate), "matmul");
  backend.check(api.matmul(b, &xn, &w_up, &up), "matmul");
  backend.check(api.swiglu(b, &gate, &up, &gate), "swiglu");
  backend.check(api.matmul(b, &gate, &w_down, &out), "matmul");
}

std::vector<float> output_logits(Backend& backend, const FlatBatch& bt, const sy_tensor& x,
                                 const sy_tensor& out_norm, float rms_eps, const sy_tensor& output,
                                 const sy_tensor& sel, const sy_tensor& logits, Buffer& act,
                                 uint64_t logits_offset) {
  const auto& api = backend.api();
  sy_backend_t b = backend.handle();
  const uint32_t n_out = bt.n_out();
  std::vector<float> out(static_cast<size_t>(n_out) * logits.ne[0]);
  if (n_out > 0) {
    // Only the rows that need logits go through the output norm and the vocab projection.
    backend.check(api.get_rows(b, &x, bt.out_rows.data(), n_out, &sel), "get_rows");
    backend.check(api.rms_norm(b, &sel, &out_norm, rms_eps, &sel), "rms_norm");
    backend.check(api.matmul(b, &sel, &output, &logits), "matmul");
  }
  backend.check(api.synchronize(b), "synchronize");
  if (n_out > 0) act.read(logits_offset, out.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace sy::model
