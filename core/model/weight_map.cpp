#include "model/weight_map.h"

#include <cstring>
#include <stdexcept>

#include "gguf/gguf.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"

namespace sy::model {

WeightMap::WeightMap(const gguf::File& file, Backend& backend) : file_(file), backend_(backend) {
  const uint8_t* lo = nullptr;
  const uint8_t* hi = nullptr;
  for (const auto& t : file.tensors()) {
    if (!lo || t.data < lo) lo = t.data;
    if (!hi || t.data + t.nbytes > hi) hi = t.data + t.nbytes;
  }
  if (!lo) throw Error(file.origin() + ": no tensors");
  base_ = lo;
  buf_ = backend.from_host(const_cast<uint8_t*>(lo), static_cast<uint64_t>(hi - lo));
}

namespace {

// Throws naming the tensor unless its shape is `ne` (trailing dims 1).
void check_shape(const gguf::File& file, const gguf::TensorInfo& t,
                 std::initializer_list<int64_t> ne) {
  auto fail = [&](const std::string& why) {
    return std::runtime_error(file.origin() + ": tensor " + t.name + " " + why);
  };
  int i = 0;
  for (int64_t d : ne) {
    if (t.ne[i] != d)
      throw fail("has ne[" + std::to_string(i) + "]=" + std::to_string(t.ne[i]) + ", expected " +
                 std::to_string(d));
    ++i;
  }
  for (; i < 4; ++i)
    if (t.ne[i] != 1) throw fail("has too many dims");
}

}  // namespace

const sy_tensor* WeightMap::find(const std::string& name, std::initializer_list<int64_t> ne,
                                 Kind kind) {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t) return nullptr;
  auto fail = [&](const std::string& why) {
    return std::runtime_error(file_.origin() + ": tensor " + name + " " + why);
  };
  check_shape(file_, *t, ne);
  if (kind == Kind::f32 && t->type != SY_DTYPE_F32)
    throw fail("must be F32, it is " + std::string(dtype::name(t->type)));
  if (kind == Kind::matrix && !(backend_.device().weight_dtypes & (1ull << t->type)))
    throw Error("backend " + backend_.plugin().name() + " cannot multiply " + dtype::name(t->type) +
                " weights (tensor " + name + ")");
  owned_.push_back(std::make_unique<sy_tensor>(
      make_tensor(*buf_, t->type, ne, static_cast<uint64_t>(t->data - base_))));
  used_.insert(name);
  return owned_.back().get();
}

const sy_tensor& WeightMap::matmul_only(const sy_tensor& t) {
  if (!backend_.api().weight_pack) return t;
  sy_buffer_t out = nullptr;
  backend_.weight_pack(&t, &out);
  if (!out) return t;
  const uint64_t bytes = dtype::row_bytes(t.dtype, t.ne[0]) * static_cast<uint64_t>(t.ne[1]);
  packed_.push_back(std::make_unique<Buffer>(&backend_, out, bytes));
  if (t.buffer == buf_->handle()) file_.release(base_ + t.offset, bytes);  // not needed again
  owned_.push_back(
      std::make_unique<sy_tensor>(make_tensor(*packed_.back(), t.dtype, {t.ne[0], t.ne[1]})));
  return *owned_.back();
}

std::optional<float> WeightMap::scalar(const std::string& name) {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t) return std::nullopt;
  check_shape(file_, *t, {1});
  if (t->type != SY_DTYPE_F32)
    throw Error(file_.origin() + ": tensor " + name + " must be F32, it is " +
                dtype::name(t->type));
  float v = 0;
  std::memcpy(&v, t->data, sizeof v);
  used_.insert(name);
  return v;
}

bool WeightMap::accept(const std::string& name, std::initializer_list<int64_t> ne) {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t) return false;
  check_shape(file_, *t, ne);
  used_.insert(name);
  return true;
}

std::vector<std::string> WeightMap::unused() const {
  std::vector<std::string> out;
  for (const auto& t : file_.tensors())
    if (!used_.count(t.name)) out.push_back(t.name);
  return out;
}

const sy_tensor& WeightMap::get(const std::string& name, std::initializer_list<int64_t> ne,
                                Kind kind) {
  const sy_tensor* t = find(name, ne, kind);
  if (!t) throw Error(file_.origin() + ": missing tensor " + name);
  return *t;
}

sy_tensor WeightMap::span(const sy_tensor& t, int64_t i0, int64_t n) {
  sy_tensor v = t;
  v.offset += static_cast<uint64_t>(i0) * sizeof(float);
  v.ne[0] = n;
  return v;
}

sy_tensor WeightMap::rows(const sy_tensor& t, int64_t r0, int64_t n) {
  sy_tensor v = t;
  v.offset += static_cast<uint64_t>(r0 * dtype::row_bytes(t.dtype, t.ne[0]));
  v.ne[1] = n;
  return v;
}

}  // namespace sy::model
