// File::open / File::parse: a bounds-checked cursor over mapped bytes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gguf_detail.h"

namespace sy::gguf {
namespace {

static_assert(std::endian::native == std::endian::little, "GGUF is read by memcpy");

constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;              // key len, 1-byte key, type, u8
constexpr uint64_t kMinTensorBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name, n_dims, ne[0], type, offset

std::string num(uint64_t v) {
  return std::to_string(v);
}

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& origin)
      : data_(data), size_(size), origin_(origin) {}

  size_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  // Prefix of every message about the item being read ("key 'x'", "tensor 3", ...).
  void set_subject(std::string s) { subject_ = std::move(s); }
  const std::string& subject() const { return subject_; }

  [[noreturn]] void fail(Errc c, const std::string& detail) const {
    detail::fail(origin_, c, detail);
  }
  std::string about(const char* what) const {
    return subject_.empty() ? std::string(what) : subject_ + " " + what;
  }

  template <class T>
  T read(const char* what) {
    if (sizeof(T) > left()) {
      fail(Errc::truncated, about(what) + " at offset " + num(pos_) + " needs " + num(sizeof(T)) +
                                " bytes, " + num(left()) + " left");
    }
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const char* what) {
    const size_t at = pos_;
    const uint64_t n = read<uint64_t>(what);
    if (n > left()) {
      fail(Errc::bad_string, about(what) + " at offset " + num(at) + " has length " + num(n) +
                                 ", over the " + num(left()) + " bytes left");
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

  ValueType read_type(const char* what) {
    const size_t at = pos_;
    const uint32_t t = read<uint32_t>(what);
    if (!detail::is_value_type(t)) {
      fail(Errc::bad_value_type, about(what) + " " + num(t) + " at offset " + num(at) + " unknown");
    }
    return static_cast<ValueType>(t);
  }

  Value read_value(ValueType t, int depth) {
    Value v;
    v.type = t;
    switch (t) {
      case ValueType::UINT8:
        v.u = read<uint8_t>("value");
        break;
      case ValueType::INT8:
        v.i = read<int8_t>("value");
        break;
      case ValueType::UINT16:
        v.u = read<uint16_t>("value");
        break;
      case ValueType::INT16:
        v.i = read<int16_t>("value");
        break;
      case ValueType::UINT32:
        v.u = read<uint32_t>("value");
        break;
      case ValueType::INT32:
        v.i = read<int32_t>("value");
        break;
      case ValueType::FLOAT32:
        v.f = read<float>("value");
        break;
      case ValueType::UINT64:
        v.u = read<uint64_t>("value");
        break;
      case ValueType::INT64:
        v.i = read<int64_t>("value");
        break;
      case ValueType::FLOAT64:
        v.f = read<double>("value");
        break;
      case ValueType::BOOL: {
        const size_t at = pos_;
        v.u = read<uint8_t>("value");
        if (v.u > 1) {
          fail(Errc::bad_value_type,
               about("BOOL") + " at offset " + num(at) + " is " + num(v.u) + ", expected 0 or 1");
        }
        break;
      }
      case ValueType::STRING:
        v.s = read_string("string");
        break;
      case ValueType::ARRAY: {
        const size_t at = pos_;
        if (depth >= detail::kMaxArrayDepth) {
          fail(Errc::bad_value_type, about("array") + " at offset " + num(at) +
                                         " nests deeper than " +
                                         std::to_string(detail::kMaxArrayDepth) + " levels");
        }
        v.array_type = read_type("array element type");
        const uint64_t n = read<uint64_t>("array count");
        const uint64_t min = detail::min_value_bytes(v.array_type);
        if (n > left() / min) {
          fail(Errc::too_many, about("array") + " at offset " + num(at) + " of " + num(n) + " " +
                                   value_type_name(v.array_type) + " cannot fit in the " +
                                   num(left()) + " bytes left (each needs at least " + num(min) +
                                   ")");
        }
        v.array.reserve(n);
        for (uint64_t k = 0; k < n; ++k) v.array.push_back(read_value(v.array_type, depth + 1));
        break;
      }
    }
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& origin_;
  std::string subject_;
};

// A name from the file as messages show it: printable ASCII as is, other bytes escaped, cut
// at 96 characters, so a crafted name cannot reach a terminal or log as control codes.
std::string in_quotes(const std::string& s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 96) {
      out += "...";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "'";
}

}  // namespace

std::unique_ptr<File> File::parse(const uint8_t* data, size_t size, std::string origin) {
  std::unique_ptr<File> f(new File());
  f->origin_ = std::move(origin);
  f->parse_all(data, size);
  return f;
}

std::unique_ptr<File> File::open(const std::filesystem::path& path) {
  const std::string origin = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) detail::fail(origin, Errc::io, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    detail::fail(origin, Errc::io, std::string("cannot stat: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    detail::fail(origin, Errc::io, "not a regular file");
  }
  std::unique_ptr<File> f(new File());
  f->origin_ = origin;
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {  // mmap refuses length 0; an empty file fails as truncated below
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      detail::fail(origin, Errc::io,
                   "cannot map " + num(size) + " bytes: " + std::string(std::strerror(e)));
    }
    f->map_ = m;
    f->map_size_ = size;
  }
  ::close(fd);  // the mapping keeps the file
  f->parse_all(static_cast<const uint8_t*>(f->map_), size);
  return f;
}

File::~File() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
}

void File::release(const uint8_t* p, uint64_t n) const {
  const auto* map = static_cast<const uint8_t*>(map_);
  if (map == nullptr || p < map || n > map_size_ || p - map > static_cast<ptrdiff_t>(map_size_ - n))
    return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  // A private, read-only file mapping: dropped pages fault back in from the file, unchanged.
  if (b < e) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

void File::parse_all(const uint8_t* data, size_t size) {
  Cursor c(data, size, origin_);

  const uint32_t magic = c.read<uint32_t>("magic");
  if (magic != detail::kMagic) {
    // Nothing of what is there is quoted: the file may be anything (a password file).
    c.fail(Errc::bad_magic, "not a GGUF file (it does not start with 'GGUF')");
  }
  version_ = c.read<uint32_t>("version");
  if (version_ != 3 && version_ != 2) {
    c.fail(Errc::bad_version, "version " + num(version_) + " not supported (expected 3 or 2)");
  }
  const uint64_t n_tensors = c.read<uint64_t>("tensor_count");
  const uint64_t n_kv = c.read<uint64_t>("kv_count");
  // Counts are checked against the bytes left before anything is reserved for them.
  if (n_tensors > c.left() / kMinTensorBytes) {
    c.fail(Errc::too_many, "tensor_count " + num(n_tensors) + " cannot fit in the " +
                               num(c.left()) + " bytes left (each tensor info needs at least " +
                               num(kMinTensorBytes) + ")");
  }
  if (n_kv > c.left() / kMinKvBytes) {
    c.fail(Errc::too_many, "kv_count " + num(n_kv) + " cannot fit in the " + num(c.left()) +
                               " bytes left (each pair needs at least " + num(kMinKvBytes) + ")");
  }
  if (n_kv * kMinKvBytes + n_tensors * kMinTensorBytes > c.left()) {
    c.fail(Errc::too_many, "kv_count " + num(n_kv) + " and tensor_count " + num(n_tensors) +
                               " need at least " +
                               num(n_kv * kMinKvBytes + n_tensors * kMinTensorBytes) + " bytes, " +
                               num(c.left()) + " left");
  }

  kv_.reserve(n_kv);
  for (uint64_t k = 0; k < n_kv; ++k) {
    c.set_subject("kv " + num(k));
    const size_t at = c.pos();
    std::string key = c.read_string("key");
    if (key.empty()) {
      c.fail(Errc::bad_string, c.subject() + " key at offset " + num(at) + " is empty");
    }
    c.set_subject("key " + in_quotes(key));
    if (auto it = kv_index_.find(key); it != kv_index_.end()) {
      c.fail(Errc::duplicate_key, c.subject() + " at offset " + num(at) + " (kv " + num(k) +
                                      ") repeats kv " + num(it->second));
    }
    const ValueType t = c.read_type("value type");
    Value v = c.read_value(t, 0);
    kv_index_.emplace(key, kv_.size());
    kv_.emplace_back(std::move(key), std::move(v));
  }
  c.set_subject("");

  alignment_ = detail::kDefaultAlignment;
  if (const Value* a = find(detail::kAlignmentKey)) {
    if (a->type != ValueType::UINT32) {
      c.fail(Errc::bad_alignment, std::string(detail::kAlignmentKey) + " has type " +
                                      detail::describe_type(*a) + ", expected UINT32");
    }
    if (!detail::is_pow2(a->u)) {
      c.fail(Errc::bad_alignment,
             std::string(detail::kAlignmentKey) + " " + num(a->u) + " is not a power of two");
    }
    alignment_ = static_cast<uint32_t>(a->u);
  }

  if (n_tensors > c.left() / kMinTensorBytes) {
    c.fail(Errc::too_many,
           "tensor_count " + num(n_tensors) + " cannot fit in the " + num(c.left()) +
               " bytes left after the metadata (each needs at least " + num(kMinTensorBytes) + ")");
  }
  tensors_.reserve(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    c.set_subject("tensor " + num(k));
    const size_t at = c.pos();
    TensorInfo ti;
    ti.name = c.read_string("name");
    if (ti.name.empty() || ti.name.size() > detail::kMaxNameBytes) {
      c.fail(Errc::bad_tensor_name, c.subject() + " name at offset " + num(at) + " has " +
                                        num(ti.name.size()) + " bytes, must be 1.." +
                                        num(detail::kMaxNameBytes));
    }
    const std::string subject = "tensor " + in_quotes(ti.name);
    if (auto it = tensor_index_.find(ti.name); it != tensor_index_.end()) {
      c.fail(Errc::duplicate_tensor,
             subject + " (tensor " + num(k) + ") repeats tensor " + num(it->second));
    }
    c.set_subject(subject);
    ti.n_dims = c.read<uint32_t>("n_dims");
    if (ti.n_dims < 1 || ti.n_dims > 4) {
      c.fail(Errc::bad_dims, subject + " n_dims " + num(ti.n_dims) + ", must be 1..4");
    }
    for (uint32_t d = 0; d < ti.n_dims; ++d)
      ti.ne[d] = static_cast<int64_t>(c.read<uint64_t>("ne"));
    ti.type = c.read<uint32_t>("type");
    ti.nbytes = detail::tensor_nbytes(origin_, subject, ti.type, ti.ne, ti.n_dims);
    ti.offset = c.read<uint64_t>("offset");
    if (ti.offset % alignment_ != 0) {
      c.fail(Errc::misaligned_offset, subject + " offset " + num(ti.offset) +
                                          " is not a multiple of the alignment " + num(alignment_));
    }
    tensor_index_.emplace(ti.name, tensors_.size());
    tensors_.push_back(std::move(ti));
  }
  c.set_subject("");

  // The data section starts at the next alignment boundary; with no tensors it may be absent.
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  for (TensorInfo& ti : tensors_) {
    const uint64_t room = data_offset_ <= size ? size - data_offset_ : 0;
    if (data_offset_ > size || ti.offset > room || ti.nbytes > room - ti.offset) {
      c.fail(Errc::out_of_bounds, "tensor " + in_quotes(ti.name) + " offset " + num(ti.offset) +
                                      " size " + num(ti.nbytes) + " (data section at " +
                                      num(data_offset_) + ") runs past the end of the file (" +
                                      num(size) + " bytes)");
    }
    ti.data = data + data_offset_ + ti.offset;
  }

  // Any non-overlapping aligned layout is accepted; llama.cpp would also demand packing in order.
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(tensors_.size());
  for (const TensorInfo& ti : tensors_) by_offset.push_back(&ti);
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const TensorInfo* a = by_offset[k - 1];
    const TensorInfo* b = by_offset[k];
    if (a->offset + a->nbytes > b->offset) {
      c.fail(Errc::overlap, "tensor " + in_quotes(b->name) + " at offset " + num(b->offset) +
                                " overlaps tensor " + in_quotes(a->name) + " at offset " +
                                num(a->offset) + " size " + num(a->nbytes));
    }
  }
}

}  // namespace sy::gguf
