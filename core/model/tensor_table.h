// An architecture's tensor table, written once per family (model/arch/) and read three ways: the
// loader binds each tensor of a file (and refuses the file when one is missing, misshapen or left
// over), the random-model writer writes each one (modelgen), and the cost model counts them
// (parameters, bytes, active parameters). A family lists its tensors in file order through this
// interface; `Init` says how the writer fills one, and is ignored by the others.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "host/backend.h"

namespace sy::model {

// How the random-model writer fills a tensor.
struct Init {
  enum Kind : uint8_t {
    matrix,     // N(0, 1 / fan_in): activations keep unit scale
    residual,   // N(0, gain^2 / fan_in), gain = 1 / sqrt(2 n_layer): a projection into the stream
    embedding,  // N(0, 1)
    router,     // N(0, 1) / sqrt(fan_in), in F32 (an MoE router)
    norm,       // 1 + 0.1 N(0, 1)
    normal,     // N(0, stddev^2)
    dt_bias,    // Mamba's dt init: softplus(bias) log-uniform in [1e-3, 1e-1]
    a_log,      // Mamba-1's S4D-real A = -exp(log(n + 1) + 0.1 N), n = index mod stddev
    a_head,     // one decay per head: A = -exp(U[log 1, log 16]) (Mamba-2, gated delta nets)
    rope_quarter,  // Gemma 4's rope_freqs: 1 for the first quarter of the pairs, then 1e30
  };
  Kind kind = matrix;
  float stddev = 0.0f;  // normal: the deviation; a_log: d_state
};

// Whether a file must have the tensor, and whether the writer puts it in.
enum class Need : uint8_t {
  required,  // the loader refuses a file without it; the writer writes it
  optional,  // llama.cpp's TENSOR_NOT_REQUIRED; the writer leaves it out
  written,   // optional for the loader, written by the writer (real files of the family have it)
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> ne;
  bool matrix = true;  // any dtype the backend multiplies (else F32 only)
  Need need = Need::required;
  Init init;
};

// A projection y = W x with llama.cpp's optional epilogue: a bias and a per-tensor output scale,
// applied in the order its graph applies them.
struct Linear {
  sy_tensor w{};
  sy_tensor bias{};  // valid when has_bias
  bool has_bias = false;
  float scale = 1.0f;
  bool bias_first = false;  // (W x + b) * s (the FFN) instead of (W x) * s + b
  bool present() const { return w.struct_size != 0; }
  bool has_epilogue() const { return has_bias || scale != 1.0f; }
};

// What a family's loader does with one of llama.cpp's optional tensors: refuse it (its loader
// does not create it, so a file with it is refused as having an unused tensor), take it without
// applying it (its loader creates it, its graph ignores it), or apply it.
enum class Take : uint8_t { no, unapplied, applied };

// What a family takes of a projection's optional tensors.
struct LinearRules {
  Take bias = Take::no;
  bool scale = false;       // `.scale` multiplies; otherwise taken and not applied
  bool bias_first = false;  // (W x + b) * s, build_ffn's order
  bool packed = true;       // only matmul reads it whole: offer the backend its own layout
  bool write_bias = false;  // the writer writes the bias (real files of the family have one)
  // llama.cpp's generic pass creates `.scale` / `.input_scale` for this projection (q, k, v, o,
  // qkv, attn_gate, the FFN and shared-expert projections, ssm_in/out, ssm_alpha/beta); for the
  // others (ssm_ba, the latent and short-conv projections) a file with them is refused.
  bool generic_scales = true;
};

class TensorTable {
 public:
  virtual ~TensorTable() = default;

  // The tensor, bound (loader) or written (writer); nullptr for an absent optional tensor. Every
  // implementation returns non-null for a required one.
  virtual const sy_tensor* take(const TensorSpec& spec) = 0;
  // A `.scale` {1}: its value when applied (1 when absent); otherwise taken, not applied.
  virtual float scale(const std::string& name, bool applied) = 0;
  // Taken as llama.cpp's loader takes it, but not applied, as its graph does not apply it.
  virtual void unapplied(const std::string& name, std::initializer_list<int64_t> ne) = 0;
  // t from now on read only by matmul, whole: the backend's own layout where it has one.
  virtual sy_tensor packed(const sy_tensor& t) { return t; }
  // A matrix whose row r becomes row perm[r] of the same shape (a fused projection's interleaved
  // heads regrouped, so that each part is a block of rows); the loader copies it once.
  virtual sy_tensor permuted(const sy_tensor& t, const std::vector<int64_t>& perm) {
    (void)perm;
    return t;
  }
  // True when the file (loader) or the description (writer) has the tensor.
  virtual bool has(const std::string& name) const = 0;

  // The shared shapes of the calls above.
  const sy_tensor& matrix(const std::string& name, std::vector<int64_t> ne, Init init = {});
  const sy_tensor& f32(const std::string& name, std::vector<int64_t> ne, Init init);
  const sy_tensor& norm(const std::string& name, int64_t n) {
    return f32(name, {n}, {Init::norm, 0.0f});
  }
  const sy_tensor* optional_f32(const std::string& name, std::vector<int64_t> ne, Init init,
                                Need need = Need::optional);
  // A projection `base`.weight {in, out} with its optional bias and `.scale`, and the
  // `.input_scale` llama.cpp's loader takes but none of these graphs applies.
  Linear linear(const std::string& base, int64_t in, int64_t out, const LinearRules& rules,
                Init init = {});

  TensorTable() = default;
  TensorTable(const TensorTable&) = delete;
  TensorTable& operator=(const TensorTable&) = delete;
};

// Rows [r0, r0 + n) of a 2-D matrix: a split of a fused projection (ssm_in -> x | z).
sy_tensor rows_of(const sy_tensor& t, int64_t r0, int64_t n);
// Values [i0, i0 + n) of an F32 vector: a split of a fused bias.
sy_tensor span_of(const sy_tensor& t, int64_t i0, int64_t n);

}  // namespace sy::model
