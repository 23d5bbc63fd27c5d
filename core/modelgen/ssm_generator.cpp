// Random-weight `mamba` and `jamba` GGUFs with llama.cpp's keys, tensor names and shapes (the
// table is in model/JAMBA-GGUF.md), the hybrid presets, and parameter counts for every arch.
#include <cmath>
#include <stdexcept>

#include "gguf/gguf.h"
#include "modelgen/generator_detail.h"
#include "modelgen/quant_mix.h"
#include "switchyard/common/dtype.h"

namespace sy::model {

bool ModelShape::is_attention_layer(uint32_t l) const {
  if (arch == "mamba") return false;
  if (arch != "jamba") return true;
  return l >= attn_layer_offset && (l - attn_layer_offset) % std::max(1u, attn_layer_period) == 0;
}

bool ModelShape::is_moe_layer(uint32_t l) const {
  if (n_expert == 0 || arch == "mamba") return false;
  if (arch != "jamba") return true;
  return l >= expert_layer_offset &&
         (l - expert_layer_offset) % std::max(1u, expert_layer_period) == 0;
}

uint64_t count_active_params(const ModelShape& s) {
  return detail::count_params(s, true);
}

namespace detail {
namespace {

// Writes tensors: matrices in the type the file type's mix gives them, everything else F32.
class Sink {
 public:
  Sink(gguf::Writer& w, Rng& rng, const QuantMix* mix) : w_(w), rng_(rng), mix_(mix) {}

  void matrix(const std::string& name, std::vector<int64_t> ne, float stddev) {
    fill(ne, [&] { return stddev * rng_.normal(); });
    put(name, mix_->type_for(name, ne[0]), ne);
  }
  void norm(const std::string& name, int64_t n) {
    fill({n}, [&] { return 1.0f + 0.1f * rng_.normal(); });
    put(name, SY_DTYPE_F32, {n});
  }
  template <class F>
  void f32(const std::string& name, std::vector<int64_t> ne, F&& gen) {
    fill(ne, gen);
    put(name, SY_DTYPE_F32, ne);
  }

 private:
  template <class F>
  void fill(const std::vector<int64_t>& ne, F&& gen) {
    int64_t n = 1;
    for (auto d : ne) n *= d;
    f_.resize(n);
    for (auto& v : f_) v = gen();
  }
  void put(const std::string& name, uint32_t t, const std::vector<int64_t>& ne) {
    const int64_t rb = dtype::row_bytes(t, ne[0]), rows = (int64_t)f_.size() / ne[0];
    bytes_.resize(rb * rows);
    for (int64_t r = 0; r < rows; ++r)
      dtype::row_from_f32(t, f_.data() + r * ne[0], bytes_.data() + r * rb, ne[0]);
    w_.add_tensor(name, t, ne, bytes_.data(), bytes_.size());
  }

  gguf::Writer& w_;
  Rng& rng_;
  const QuantMix* mix_;  // null: no matrices (the router)
  std::vector<float> f_;
  std::vector<uint8_t> bytes_;
};

void check_shape(const ModelShape& s, const dtype::FileType& ft, const std::string& dtype) {
  auto bad = [](const std::string& why) { throw std::invalid_argument(why); };
  if (s.arch != "mamba" && s.arch != "jamba")
    bad("arch '" + s.arch + "' is not one of llama, mamba, jamba");
  if (s.n_vocab < 259) bad("n_vocab must be at least 259 (3 specials + 256 bytes)");
  if (s.n_layer == 0) bad("n_layer must be at least 1");
  if (s.ssm_d_conv < 1 || s.ssm_d_state < 1) bad("ssm_d_conv and ssm_d_state must be positive");
  if (s.arch == "jamba") {
    if (s.n_head == 0 || s.n_embd % s.n_head || s.n_head_kv == 0 || s.n_head % s.n_head_kv)
      bad("n_head must divide n_embd and n_head_kv must divide n_head");
    if (s.n_expert > 0 && (s.n_expert_used == 0 || s.n_expert_used > s.n_expert))
      bad("n_expert_used must be in [1, n_expert]");
  }
  // Every quantised matrix's rows must be whole blocks.
  const std::pair<const char*, uint32_t> dims[] = {{"n_embd", s.n_embd},
                                                   {"d_inner (2 * n_embd)", s.d_inner()},
                                                   {"ssm_dt_rank", s.dt_rank()},
                                                   {"n_ff", s.arch == "jamba" ? s.n_ff : 32u}};
  check_whole_blocks(ft, dtype, dims, 4);
}

}  // namespace

void add_router(gguf::Writer& w, Rng& rng, const std::string& name, int64_t n_embd,
                int64_t n_expert) {
  Sink(w, rng, nullptr).f32(name, {n_embd, n_expert}, [&] {
    return rng.normal() / std::sqrt(float(n_embd));
  });
}

void write_random_ssm(const ModelShape& s, const std::string& dtype, uint64_t seed,
                      const std::filesystem::path& path) {
  const dtype::FileType& ft = file_type(dtype);
  check_shape(s, ft, dtype);
  const QuantMix mix(ft, s);
  using gguf::Value;
  const std::string a = s.arch + ".";
  const bool jamba = s.arch == "jamba";
  gguf::Writer w;
  w.set("general.architecture", Value::of_str(s.arch));
  w.set("general.name", Value::of_str("switchyard-random-" + s.arch + "-" +
                                      std::to_string(count_params(s, false) / 1000000) + "M"));
  set_file_type(w, ft);
  w.set(a + "vocab_size", Value::of_u32(s.n_vocab));
  w.set(a + "context_length", Value::of_u32(s.n_ctx));
  w.set(a + "embedding_length", Value::of_u32(s.n_embd));
  w.set(a + "block_count", Value::of_u32(s.n_layer));
  if (jamba) {
    // head_count_kv per layer, 0 = Mamba layer: what convert_hf_to_gguf's JambaModel writes (a
    // Python int list, so gguf-py stores INT32).
    std::vector<int32_t> kv(s.n_layer);
    for (uint32_t l = 0; l < s.n_layer; ++l)
      kv[l] = s.is_attention_layer(l) ? int32_t(s.n_head_kv) : 0;
    w.set(a + "feed_forward_length", Value::of_u32(s.n_ff));
    w.set(a + "attention.head_count", Value::of_u32(s.n_head));
    w.set(a + "attention.head_count_kv", Value::of_i32_array(kv));
  } else {
    // The Mamba converter writes these two as 0 ("seemingly required").
    w.set(a + "feed_forward_length", Value::of_u32(0));
    w.set(a + "attention.head_count", Value::of_u32(0));
  }
  w.set(a + "ssm.conv_kernel", Value::of_u32(s.ssm_d_conv));
  w.set(a + "ssm.inner_size", Value::of_u32(s.d_inner()));
  w.set(a + "ssm.state_size", Value::of_u32(s.ssm_d_state));
  w.set(a + "ssm.time_step_rank", Value::of_u32(s.dt_rank()));
  w.set(a + "attention.layer_norm_rms_epsilon", Value::of_f32(s.rms_eps));
  if (jamba && s.n_expert > 0) {
    w.set(a + "expert_count", Value::of_u32(s.n_expert));
    w.set(a + "expert_used_count", Value::of_u32(s.n_expert_used));
  }
  write_vocab(w, s.n_vocab);

  Rng rng{seed};
  Sink t(w, rng, &mix);
  const int64_t E = s.n_embd, V = s.n_vocab, F = s.n_ff, DI = s.d_inner(), S = s.ssm_d_state;
  const int64_t R = s.dt_rank(), K = s.ssm_d_conv, X = s.n_expert;
  const int64_t KV = int64_t(E / std::max(1u, s.n_head)) * s.n_head_kv;
  const float res_gain = 1.0f / std::sqrt(2.0f * s.n_layer);
  auto inv_sqrt = [](int64_t n) { return 1.0f / std::sqrt(float(n)); };
  t.matrix("token_embd.weight", {E, V}, 1.0f);
  t.norm("output_norm.weight", E);
  if (!s.tied_output) t.matrix("output.weight", {E, V}, inv_sqrt(E));
  for (uint32_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    t.norm(b + "attn_norm.weight", E);
    if (!s.is_attention_layer(l)) {
      t.matrix(b + "ssm_in.weight", {E, 2 * DI}, inv_sqrt(E));
      t.f32(b + "ssm_conv1d.weight", {K, DI}, [&] { return rng.normal() * inv_sqrt(K); });
      t.f32(b + "ssm_conv1d.bias", {DI}, [&] { return 0.1f * rng.normal(); });
      t.matrix(b + "ssm_x.weight", {DI, R + 2 * S}, inv_sqrt(DI));
      if (jamba) {
        t.norm(b + "ssm_dt_norm.weight", R);
        t.norm(b + "ssm_b_norm.weight", S);
        t.norm(b + "ssm_c_norm.weight", S);
      }
      t.matrix(b + "ssm_dt.weight", {R, DI}, inv_sqrt(R));
      // Mamba's init: softplus(bias) = dt log-uniform in [1e-3, 1e-1], stored as its inverse.
      t.f32(b + "ssm_dt.bias", {DI}, [&] {
        const float dt =
            std::exp(std::log(1e-3f) + rng.uniform() * (std::log(1e-1f) - std::log(1e-3f)));
        return dt + std::log(-std::expm1(-dt));
      });
      // S4D-real: A_log[i][n] = log(n + 1) (jittered); the file stores A = -exp(A_log).
      int64_t idx = 0;
      t.f32(b + "ssm_a", {S, DI}, [&] {
        const float n = float(idx++ % S);
        return -std::exp(std::log(n + 1.0f) + 0.1f * rng.normal());
      });
      t.f32(b + "ssm_d", {DI}, [&] { return 1.0f + 0.1f * rng.normal(); });
      t.matrix(b + "ssm_out.weight", {DI, E}, res_gain * inv_sqrt(DI));
    } else {
      t.matrix(b + "attn_q.weight", {E, E}, inv_sqrt(E));
      t.matrix(b + "attn_k.weight", {E, KV}, inv_sqrt(E));
      t.matrix(b + "attn_v.weight", {E, KV}, inv_sqrt(E));
      t.matrix(b + "attn_output.weight", {E, E}, res_gain * inv_sqrt(E));
    }
    if (!jamba) continue;  // Mamba layers have no FFN
    t.norm(b + "ffn_norm.weight", E);
    if (s.is_moe_layer(l)) {
      add_router(w, rng, b + "ffn_gate_inp.weight", E, X);
      t.matrix(b + "ffn_gate_exps.weight", {E, F, X}, inv_sqrt(E));
      t.matrix(b + "ffn_down_exps.weight", {F, E, X}, res_gain * inv_sqrt(F));
      t.matrix(b + "ffn_up_exps.weight", {E, F, X}, inv_sqrt(E));
    } else {
      t.matrix(b + "ffn_gate.weight", {E, F}, inv_sqrt(E));
      t.matrix(b + "ffn_down.weight", {F, E}, res_gain * inv_sqrt(F));
      t.matrix(b + "ffn_up.weight", {E, F}, inv_sqrt(E));
    }
  }
  w.write(path);
}

uint64_t count_params(const ModelShape& s, bool active) {
  const uint64_t E = s.n_embd, V = s.n_vocab, F = s.n_ff, DI = s.d_inner(), S = s.ssm_d_state;
  const uint64_t R = s.dt_rank(), K = s.ssm_d_conv, X = s.n_expert;
  const uint64_t hd = s.n_head ? E / s.n_head : 0, Q = hd * s.n_head, KV = hd * s.n_head_kv;
  const bool has_ffn = s.arch != "mamba";
  uint64_t n = V * E * (s.tied_output ? 1 : 2) + E;
  for (uint32_t l = 0; l < s.n_layer; ++l) {
    n += E;  // attn_norm
    if (s.is_attention_layer(l)) {
      n += E * Q + 2 * E * KV + Q * E;
    } else {
      n += E * 2 * DI + K * DI + DI + DI * (R + 2 * S) + R * DI + DI + S * DI + DI + DI * E;
      if (s.arch == "jamba") n += R + 2 * S;  // dt, B, C norms
    }
    if (!has_ffn) continue;
    n += E;  // ffn_norm
    if (s.is_moe_layer(l))
      n += E * X + (active ? s.n_expert_used : X) * 3 * E * F;
    else
      n += 3 * E * F;
  }
  return n;
}

bool hybrid_preset(const std::string& name, ModelShape& s) {
  auto jamba = [&](uint32_t V, uint32_t ctx, uint32_t E, uint32_t L, uint32_t F) {
    s.arch = "jamba";
    s.n_vocab = V, s.n_ctx = ctx, s.n_embd = E, s.n_layer = L, s.n_ff = F;
    s.ssm_dt_rank = 32;  // a whole Q8_0 block (the default would be n_embd / 16)
    s.n_expert = 4, s.n_expert_used = 2;
  };
  if (name == "hybrid-tiny") {
    // M+MoE, A+dense, M+dense, A+MoE: every layer kind once.
    jamba(259, 512, 64, 4, 96);
    s.n_head = 4, s.n_head_kv = 2;
    s.attn_layer_offset = 1, s.attn_layer_period = 2;
    s.expert_layer_offset = 0, s.expert_layer_period = 3;
    return true;
  }
  if (name == "mamba-tiny") {
    s.arch = "mamba";
    s.n_embd = 64, s.n_layer = 3, s.n_ff = 0, s.n_head = 0, s.n_head_kv = 0;
    return true;  // dt_rank: the default ceil(64 / 16) = 4
  }
  if (name == "moe-tiny") {
    s.n_layer = 2, s.n_ff = 64, s.n_expert = 4, s.n_expert_used = 2;
    return true;
  }
  if (name == "hybrid-small" || name == "hybrid-small-active") {
    // dense-small's width; Jamba's block with one attention layer in four and MoE (4 experts,
    // top 2) every second layer. n_ff 192: total parameters within 3% of dense-small; 320:
    // active parameters within 3% of it.
    jamba(512, 2048, 256, 4, name == "hybrid-small" ? 192 : 320);
    s.n_head = 8, s.n_head_kv = 4;
    s.attn_layer_offset = 2, s.attn_layer_period = 4;
    return true;
  }
  if (name == "dense-20m" || name == "hybrid-20m") {
    // bench-hybrid's pair: equal total parameters (within 2%), small enough that an 8k-token
    // prefill runs in seconds on two cores. Hybrid: attention in layers 3 and 7 (1:3).
    if (name == "dense-20m") {
      s.n_vocab = 4096, s.n_ctx = 16384, s.n_embd = 512, s.n_layer = 8, s.n_ff = 1024;
    } else {
      jamba(4096, 16384, 512, 8, 224);
      s.attn_layer_offset = 3, s.attn_layer_period = 4;
    }
    s.n_head = 8, s.n_head_kv = 4, s.tied_output = true;
    return true;
  }
  return false;
}

std::vector<std::string> hybrid_preset_names() {
  return {"hybrid-tiny",         "mamba-tiny", "moe-tiny",  "hybrid-small",
          "hybrid-small-active", "dense-20m",  "hybrid-20m"};
}

}  // namespace detail
}  // namespace sy::model
