#include "modelgen/tables.h"

#include <cmath>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "switchyard/common/dtype.h"

namespace sy::model {

const sy_tensor* PlaceholderTable::placeholder(const TensorSpec& spec, uint32_t dtype) {
  sy_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = dtype;
  for (int i = 0; i < 4; ++i) t.ne[i] = i < static_cast<int>(spec.ne.size()) ? spec.ne[i] : 1;
  held_.push_back(t);
  return &held_.back();
}

float WriteTable::value(const Init& init, int64_t fan_in, int64_t index) {
  switch (init.kind) {
    case Init::matrix: {
      const float stddev = 1.0f / std::sqrt(float(fan_in));
      return stddev * rng_.normal();
    }
    case Init::residual: {
      const float gain = 1.0f / std::sqrt(2.0f * d_.n_layer);
      const float stddev = gain / std::sqrt(float(fan_in));
      return stddev * rng_.normal();
    }
    case Init::embedding:
      return 1.0f * rng_.normal();
    case Init::router:
      return rng_.normal() / std::sqrt(float(fan_in));
    case Init::norm:
      return 1.0f + 0.1f * rng_.normal();
    case Init::normal:
      return init.stddev * rng_.normal();
    case Init::dt_bias: {
      // Mamba's init: softplus(bias) = dt log-uniform in [1e-3, 1e-1], stored as its inverse.
      const float dt =
          std::exp(std::log(1e-3f) + rng_.uniform() * (std::log(1e-1f) - std::log(1e-3f)));
      return dt + std::log(-std::expm1(-dt));
    }
    case Init::a_log: {
      // S4D-real: A_log[i][n] = log(n + 1) (jittered); the file stores A = -exp(A_log).
      const float n = float(index % static_cast<int64_t>(init.stddev));
      return -std::exp(std::log(n + 1.0f) + 0.1f * rng_.normal());
    }
    case Init::a_head:
      // Mamba-2's A_log = log(U[1, 16]) per head; the file stores A = -exp(A_log).
      return -(1.0f + 15.0f * rng_.uniform());
    case Init::rope_quarter:  // fan_in: the pairs; a factor of 1e30 leaves a pair unrotated
      return index < fan_in / 4 ? 1.0f : 1e30f;
  }
  return 0.0f;
}

const sy_tensor* WriteTable::take(const TensorSpec& spec) {
  if (spec.need == Need::optional) return nullptr;
  int64_t n = 1;
  for (int64_t dim : spec.ne) n *= dim;
  f_.resize(n);
  for (int64_t i = 0; i < n; ++i) f_[i] = value(spec.init, spec.ne[0], i);
  const uint32_t t = spec.matrix ? mix_.type_for(spec.name, spec.ne[0]) : uint32_t(SY_DTYPE_F32);
  const int64_t rb = dtype::row_bytes(t, spec.ne[0]), rows = n / spec.ne[0];
  bytes_.resize(rb * rows);
  for (int64_t r = 0; r < rows; ++r)
    dtype::row_from_f32(t, f_.data() + r * spec.ne[0], bytes_.data() + r * rb, spec.ne[0]);
  std::vector<int64_t> dims = spec.ne;
  // llama-quantize writes ggml's dims, trailing ones dropped ({128, 1}: {128}); a converter
  // keeps them.
  if (mix_.requantized())
    while (dims.size() > 1 && dims.back() == 1) dims.pop_back();
  w_.add_tensor(spec.name, t, std::move(dims), bytes_.data(), bytes_.size());
  return placeholder(spec, t);
}

const sy_tensor* CountTable::take(const TensorSpec& spec) {
  if (spec.need == Need::optional) return nullptr;
  uint64_t n = 1;
  for (int64_t dim : spec.ne) n *= static_cast<uint64_t>(dim);
  params += n;
  // Expert tensors: one token reads n_expert_used of n_expert matrices.
  const bool experts = spec.name.find("_exps.") != std::string::npos && d_.n_expert > 0;
  active_params += experts ? n / d_.n_expert * d_.n_expert_used : n;
  return placeholder(spec, SY_DTYPE_F32);
}

}  // namespace sy::model
