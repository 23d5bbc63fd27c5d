// Names, the Error type and Value constructors.
#include "gguf_detail.h"

namespace sy::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
      return "UINT8";
    case ValueType::INT8:
      return "INT8";
    case ValueType::UINT16:
      return "UINT16";
    case ValueType::INT16:
      return "INT16";
    case ValueType::UINT32:
      return "UINT32";
    case ValueType::INT32:
      return "INT32";
    case ValueType::FLOAT32:
      return "FLOAT32";
    case ValueType::BOOL:
      return "BOOL";
    case ValueType::STRING:
      return "STRING";
    case ValueType::ARRAY:
      return "ARRAY";
    case ValueType::UINT64:
      return "UINT64";
    case ValueType::INT64:
      return "INT64";
    case ValueType::FLOAT64:
      return "FLOAT64";
  }
  return "unknown";
}

const char* errc_name(Errc c) {
  switch (c) {
    case Errc::io:
      return "io";
    case Errc::truncated:
      return "truncated";
    case Errc::bad_magic:
      return "bad_magic";
    case Errc::bad_version:
      return "bad_version";
    case Errc::too_many:
      return "too_many";
    case Errc::bad_value_type:
      return "bad_value_type";
    case Errc::bad_string:
      return "bad_string";
    case Errc::duplicate_key:
      return "duplicate_key";
    case Errc::bad_alignment:
      return "bad_alignment";
    case Errc::bad_tensor_name:
      return "bad_tensor_name";
    case Errc::duplicate_tensor:
      return "duplicate_tensor";
    case Errc::bad_dims:
      return "bad_dims";
    case Errc::bad_tensor_type:
      return "bad_tensor_type";
    case Errc::misaligned_offset:
      return "misaligned_offset";
    case Errc::out_of_bounds:
      return "out_of_bounds";
    case Errc::overlap:
      return "overlap";
    case Errc::wrong_type:
      return "wrong_type";
    case Errc::missing_key:
      return "missing_key";
  }
  return "unknown";
}

Error::Error(Errc code, const std::string& message)
    : sy::Error(SY_ERR_INVALID_ARG, message), code_(code) {}

Value Value::of_u32(uint32_t v) {
  return {.type = ValueType::UINT32, .u = v};
}
Value Value::of_i32(int32_t v) {
  return {.type = ValueType::INT32, .i = v};
}
Value Value::of_u64(uint64_t v) {
  return {.type = ValueType::UINT64, .u = v};
}
Value Value::of_f32(float v) {
  return {.type = ValueType::FLOAT32, .f = v};
}
Value Value::of_bool(bool v) {
  return {.type = ValueType::BOOL, .u = v ? 1u : 0u};
}
Value Value::of_str(std::string v) {
  return {.type = ValueType::STRING, .s = std::move(v)};
}
Value Value::of_array(ValueType elem, std::vector<Value> items) {
  return {.type = ValueType::ARRAY, .array_type = elem, .array = std::move(items)};
}

namespace {

// An ARRAY of `elem` values, one of(x) per item.
template <class T>
Value array_of(ValueType elem, const std::vector<T>& items, Value (*of)(T)) {
  std::vector<Value> v;
  v.reserve(items.size());
  for (const T& x : items) v.push_back(of(x));
  return Value::of_array(elem, std::move(v));
}

}  // namespace

Value Value::of_str_array(const std::vector<std::string>& items) {
  return array_of(ValueType::STRING, items, &of_str);
}
Value Value::of_f32_array(const std::vector<float>& items) {
  return array_of(ValueType::FLOAT32, items, &of_f32);
}
Value Value::of_i32_array(const std::vector<int32_t>& items) {
  return array_of(ValueType::INT32, items, &of_i32);
}

namespace detail {

void fail(const std::string& origin, Errc code, const std::string& detail) {
  throw Error(code, origin + ": " + errc_name(code) + ": " + detail);
}

bool is_value_type(uint32_t t) {
  return t <= static_cast<uint32_t>(ValueType::FLOAT64);
}

uint64_t min_value_bytes(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL:
      return 1;
    case ValueType::UINT16:
    case ValueType::INT16:
      return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32:
      return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64:
    case ValueType::STRING:
      return 8;  // a string is at least its u64 length
    case ValueType::ARRAY:
      return 12;  // u32 element type + u64 count
  }
  return 1;
}

std::string describe_type(const Value& v) {
  std::string s = value_type_name(v.type);
  if (v.type == ValueType::ARRAY) s += std::string(" of ") + value_type_name(v.array_type);
  return s;
}

}  // namespace detail
}  // namespace sy::gguf
