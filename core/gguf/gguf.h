// GGUF v3 reader and writer (ggml's docs/gguf.md). The reader memory-maps the file and validates
// every count, length and offset against the file size before it allocates anything they imply.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <vector>
#include "switchyard/common/error.h"

namespace sy::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType t);

// Why a file was refused; tests match on these.
enum class Errc {
  io,                 // cannot open / map / write
  truncated,          // a read would pass the end of the file
  bad_magic,
  bad_version,
  too_many,           // a count cannot fit in the bytes left
  bad_value_type,
  bad_string,         // string length over the bytes left
  duplicate_key,
  bad_alignment,      // general.alignment not a power of two u32
  bad_tensor_name,    // empty or >= 64 bytes
  duplicate_tensor,
  bad_dims,           // n_dims > 4, a zero or negative dim, or element count overflow
  bad_tensor_type,    // unknown ggml type or ne[0] not a multiple of the block size
  misaligned_offset,  // offset not a multiple of the alignment
  out_of_bounds,      // tensor data past the end of the file
  overlap,            // two tensors' data ranges overlap
  wrong_type,         // a metadata lookup found another type than asked for
  missing_key,
};
const char* errc_name(Errc c);

class Error : public sy::Error {
 public:
  Error(Errc code, const std::string& message);
  Errc code() const { return code_; }

 private:
  Errc code_;
};

struct Value {
  ValueType type = ValueType::UINT32;
  ValueType array_type = ValueType::UINT32;  // element type when type == ARRAY
  uint64_t u = 0;                            // UINT*, BOOL
  int64_t i = 0;                             // INT*
  double f = 0;                              // FLOAT*
  std::string s;                             // STRING
  std::vector<Value> array;                  // ARRAY

  bool operator==(const Value&) const = default;
  static Value of_u32(uint32_t v);
  static Value of_i32(int32_t v);
  static Value of_u64(uint64_t v);
  static Value of_f32(float v);
  static Value of_bool(bool v);
  static Value of_str(std::string v);
  static Value of_array(ValueType elem, std::vector<Value> items);
  static Value of_str_array(const std::vector<std::string>& items);
  static Value of_f32_array(const std::vector<float>& items);
  static Value of_i32_array(const std::vector<int32_t>& items);
};

struct TensorInfo {
  std::string name;
  uint32_t type = 0;  // ggml type id == sy_dtype
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  uint64_t offset = 0;  // relative to the data section
  uint64_t nbytes = 0;
  const uint8_t* data = nullptr;  // into the mapping (reader only)
  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class File {
 public:
  // Maps and parses; throws Error naming the file and the problem.
  static std::unique_ptr<File> open(const std::filesystem::path& path);
  // Parses bytes the caller keeps alive (tests).
  static std::unique_ptr<File> parse(const uint8_t* data, size_t size, std::string origin);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  // File offset of the data section; TensorInfo::offset is relative to it.
  uint64_t data_offset() const { return data_offset_; }
  const std::string& origin() const { return origin_; }
  // Keys in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const Value* find(std::string_view key) const;
  const TensorInfo* find_tensor(std::string_view name) const;

  // Typed lookups: nullopt when absent; Errc::wrong_type (naming key and both types) when the
  // stored type does not convert (any integer type converts to any other when in range).
  std::optional<uint64_t> get_uint(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;  // FLOAT32/FLOAT64 only
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  // Errc::missing_key when absent.
  uint64_t require_uint(std::string_view key) const;
  std::string require_string(std::string_view key) const;

  // Gives the OS back the mapped pages wholly inside [p, p + n): a tensor whose bytes the
  // backend keeps in a layout of its own (weight_pack), so that a packed model is not resident
  // twice. A page touched again is read again from the file. No-op for a file parsed from
  // memory (File::parse), whose bytes the caller owns.
  void release(const uint8_t* p, uint64_t n) const;

 private:
  File() = default;
  void parse_all(const uint8_t* data, size_t size);
  std::string origin_;
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t, std::less<>> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
};

// Writes GGUF v3 the way llama.cpp's reader expects: tensor data packed in info order, each
// padded to the alignment. set() and add_tensor() check what the reader would refuse and throw
// Error with origin "Writer" (bad_value_type, bad_alignment, bad_tensor_name, duplicate_tensor,
// bad_dims, bad_tensor_type; a size that does not match type and dims is bad_dims).
class Writer {
 public:
  void set(std::string key, Value v);  // replaces an existing key in place
  // Copies nbytes of data; dims in ggml order.
  void add_tensor(std::string name, uint32_t type, std::vector<int64_t> dims, const void* data,
                  size_t nbytes);
  void write(const std::filesystem::path& path) const;  // throws Error(io)
  std::vector<uint8_t> to_bytes() const;

 private:
  struct Pending {
    std::string name;
    uint32_t type;
    std::vector<int64_t> dims;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Pending> tensors_;
  uint32_t alignment() const;
  // Header, KV pairs, tensor infos and the padding up to the data section.
  std::vector<uint8_t> meta_bytes() const;
};

}  // namespace sy::gguf
