#include "model/tensor_table.h"

#include "switchyard/common/dtype.h"

namespace sy::model {

const sy_tensor& TensorTable::matrix(const std::string& name, std::vector<int64_t> ne, Init init) {
  return *take({name, std::move(ne), true, Need::required, init});
}

const sy_tensor& TensorTable::f32(const std::string& name, std::vector<int64_t> ne, Init init) {
  return *take({name, std::move(ne), false, Need::required, init});
}

const sy_tensor* TensorTable::optional_f32(const std::string& name, std::vector<int64_t> ne,
                                           Init init, Need need) {
  return take({name, std::move(ne), false, need, init});
}

Linear TensorTable::linear(const std::string& base, int64_t in, int64_t out,
                           const LinearRules& rules, Init init) {
  Linear l;
  l.w = matrix(base + ".weight", {in, out}, init);
  if (rules.bias == Take::applied) {
    if (const sy_tensor* b = take({base + ".bias",
                                   {out},
                                   false,
                                   rules.write_bias ? Need::written : Need::optional,
                                   {Init::normal, 0.1f}})) {
      l.bias = *b;
      l.has_bias = true;
    }
  } else if (rules.bias == Take::unapplied) {
    unapplied(base + ".bias", {out});
  }
  if (rules.generic_scales) {
    l.scale = scale(base + ".scale", rules.scale);
    unapplied(base + ".input_scale", {1});
  }
  l.bias_first = rules.bias_first;
  if (rules.packed) l.w = packed(l.w);
  return l;
}

sy_tensor rows_of(const sy_tensor& t, int64_t r0, int64_t n) {
  sy_tensor v = t;
  v.offset += static_cast<uint64_t>(r0 * dtype::row_bytes(t.dtype, t.ne[0]));
  v.ne[1] = n;
  return v;
}

sy_tensor span_of(const sy_tensor& t, int64_t i0, int64_t n) {
  sy_tensor v = t;
  v.offset += static_cast<uint64_t>(i0) * sizeof(float);
  v.ne[0] = n;
  return v;
}

}  // namespace sy::model
