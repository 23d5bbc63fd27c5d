// Metadata and tensor lookups with typed conversion.
#include <limits>

#include "gguf_detail.h"

namespace sy::gguf {
namespace {

bool is_unsigned(ValueType t) {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 ||
         t == ValueType::UINT64;
}
bool is_signed(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 ||
         t == ValueType::INT64;
}

[[noreturn]] void wrong_type(const std::string& origin, std::string_view key, const Value& v,
                             const char* expected) {
  detail::fail(origin, Errc::wrong_type,
               "key '" + std::string(key) + "' has type " + detail::describe_type(v) +
                   ", expected " + expected);
}
[[noreturn]] void out_of_range(const std::string& origin, std::string_view key, const Value& v,
                               const char* expected) {
  const std::string shown = is_signed(v.type) ? std::to_string(v.i) : std::to_string(v.u);
  detail::fail(origin, Errc::wrong_type,
               "key '" + std::string(key) + "' has type " + value_type_name(v.type) +
                   " with value " + shown + ", out of range for " + expected);
}

}  // namespace

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<uint64_t> File::get_uint(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (is_unsigned(v->type)) return v->u;
  if (!is_signed(v->type)) wrong_type(origin_, key, *v, "UINT64");
  if (v->i < 0) out_of_range(origin_, key, *v, "UINT64");
  return static_cast<uint64_t>(v->i);
}

std::optional<int64_t> File::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (is_signed(v->type)) return v->i;
  if (!is_unsigned(v->type)) wrong_type(origin_, key, *v, "INT64");
  if (v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    out_of_range(origin_, key, *v, "INT64");
  }
  return static_cast<int64_t>(v->u);
}

std::optional<double> File::get_float(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->type != ValueType::FLOAT32 && v->type != ValueType::FLOAT64) {
    wrong_type(origin_, key, *v, "FLOAT32 or FLOAT64");
  }
  return v->f;
}

std::optional<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->type != ValueType::BOOL) wrong_type(origin_, key, *v, "BOOL");
  return v->u != 0;
}

std::optional<std::string> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->type != ValueType::STRING) wrong_type(origin_, key, *v, "STRING");
  return v->s;
}

uint64_t File::require_uint(std::string_view key) const {
  auto v = get_uint(key);
  if (!v) detail::fail(origin_, Errc::missing_key, "key '" + std::string(key) + "' not found");
  return *v;
}

std::string File::require_string(std::string_view key) const {
  auto v = get_string(key);
  if (!v) detail::fail(origin_, Errc::missing_key, "key '" + std::string(key) + "' not found");
  return std::move(*v);
}

}  // namespace sy::gguf
