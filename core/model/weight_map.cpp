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
                 const std::vector<int64_t>& ne) {
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

const sy_tensor* WeightMap::find(const std::string& name, const std::vector<int64_t>& ne,
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
  sy_tensor bound = make_tensor(*buf_, t->type, {}, static_cast<uint64_t>(t->data - base_));
  for (size_t i = 0; i < ne.size(); ++i) bound.ne[i] = ne[i];
  owned_.push_back(std::make_unique<sy_tensor>(bound));
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

bool WeightMap::accept(const std::string& name, const std::vector<int64_t>& ne) {
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

const sy_tensor& WeightMap::get(const std::string& name, const std::vector<int64_t>& ne,
                                Kind kind) {
  const sy_tensor* t = find(name, ne, kind);
  if (!t) throw Error(file_.origin() + ": missing tensor " + name);
  return *t;
}

const sy_tensor& WeightMap::permuted(const sy_tensor& t, const std::vector<int64_t>& perm) {
  const uint64_t rb = dtype::row_bytes(t.dtype, t.ne[0]);
  const int64_t rows = t.ne[1];
  if (static_cast<int64_t>(perm.size()) != rows)
    throw sy::Bug("permuted: the permutation has " + std::to_string(perm.size()) +
                  " rows, the matrix " + std::to_string(rows));
  if (t.buffer != buf_->handle()) throw sy::Bug("permuted: not a tensor of the file");
  const uint8_t* src = base_ + t.offset;
  std::vector<uint8_t> bytes(rb * static_cast<uint64_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(bytes.data() + static_cast<uint64_t>(perm[r]) * rb, src + r * rb, rb);
  auto buf = backend_.alloc(bytes.size());
  buf->write(0, bytes.data(), bytes.size());
  file_.release(src, bytes.size());
  copies_.push_back(std::move(buf));
  owned_.push_back(
      std::make_unique<sy_tensor>(make_tensor(*copies_.back(), t.dtype, {t.ne[0], t.ne[1]})));
  return *owned_.back();
}

}  // namespace sy::model
