// Writer: GGUF v3 with tensor data packed in add order, each padded to the alignment.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>

#include "gguf_detail.h"

namespace sy::gguf {
namespace {

constexpr const char* kOrigin = "Writer";

uint64_t pad_to(uint64_t n, uint64_t a) {
  return (n + a - 1) / a * a;
}

void put(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}
template <class T>
void put(std::vector<uint8_t>& out, T v) {
  put(out, &v, sizeof v);
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  put(out, s.data(), s.size());
}

// The payload of v without its type tag (array elements carry none).
void put_value(std::vector<uint8_t>& out, const Value& v) {
  switch (v.type) {
    case ValueType::UINT8:
      put<uint8_t>(out, v.u);
      break;
    case ValueType::INT8:
      put<int8_t>(out, v.i);
      break;
    case ValueType::UINT16:
      put<uint16_t>(out, v.u);
      break;
    case ValueType::INT16:
      put<int16_t>(out, v.i);
      break;
    case ValueType::UINT32:
      put<uint32_t>(out, v.u);
      break;
    case ValueType::INT32:
      put<int32_t>(out, v.i);
      break;
    case ValueType::FLOAT32:
      put<float>(out, static_cast<float>(v.f));
      break;
    case ValueType::BOOL:
      put<uint8_t>(out, v.u);
      break;
    case ValueType::STRING:
      put_string(out, v.s);
      break;
    case ValueType::UINT64:
      put<uint64_t>(out, v.u);
      break;
    case ValueType::INT64:
      put<int64_t>(out, v.i);
      break;
    case ValueType::FLOAT64:
      put<double>(out, v.f);
      break;
    case ValueType::ARRAY:
      put<uint32_t>(out, static_cast<uint32_t>(v.array_type));
      put<uint64_t>(out, v.array.size());
      for (const Value& e : v.array) put_value(out, e);
      break;
  }
}

// Refuses what the reader would refuse or what would not survive the round trip.
void check_value(const std::string& key, const Value& v, int depth) {
  const std::string who = "key '" + key + "'";
  if (!detail::is_value_type(static_cast<uint32_t>(v.type))) {
    detail::fail(kOrigin, Errc::bad_value_type,
                 who + " has unknown type " + std::to_string(static_cast<uint32_t>(v.type)));
  }
  auto range = [&](bool ok) {
    if (!ok) {
      const bool sgn =
          v.type == ValueType::INT8 || v.type == ValueType::INT16 || v.type == ValueType::INT32;
      detail::fail(kOrigin, Errc::bad_value_type,
                   who + " " + value_type_name(v.type) + " value " +
                       (sgn ? std::to_string(v.i) : std::to_string(v.u)) + " out of range");
    }
  };
  switch (v.type) {
    case ValueType::UINT8:
      range(v.u <= 0xff);
      break;
    case ValueType::UINT16:
      range(v.u <= 0xffff);
      break;
    case ValueType::UINT32:
      range(v.u <= 0xffffffffu);
      break;
    case ValueType::BOOL:
      range(v.u <= 1);
      break;
    case ValueType::INT8:
      range(v.i >= -128 && v.i <= 127);
      break;
    case ValueType::INT16:
      range(v.i >= -32768 && v.i <= 32767);
      break;
    case ValueType::INT32:
      range(v.i >= std::numeric_limits<int32_t>::min() &&
            v.i <= std::numeric_limits<int32_t>::max());
      break;
    case ValueType::ARRAY: {
      if (depth >= detail::kMaxArrayDepth) {
        detail::fail(
            kOrigin, Errc::bad_value_type,
            who + " arrays nest deeper than " + std::to_string(detail::kMaxArrayDepth) + " levels");
      }
      if (!detail::is_value_type(static_cast<uint32_t>(v.array_type))) {
        detail::fail(kOrigin, Errc::bad_value_type,
                     who + " has unknown array element type " +
                         std::to_string(static_cast<uint32_t>(v.array_type)));
      }
      for (size_t k = 0; k < v.array.size(); ++k) {
        if (v.array[k].type != v.array_type) {
          detail::fail(kOrigin, Errc::bad_value_type,
                       who + " array element " + std::to_string(k) + " has type " +
                           value_type_name(v.array[k].type) + ", expected " +
                           value_type_name(v.array_type));
        }
        check_value(key, v.array[k], depth + 1);
      }
      break;
    }
    default:
      break;
  }
}

std::atomic<unsigned> g_tmp_counter{0};

}  // namespace

void Writer::set(std::string key, Value v) {
  if (key.empty()) detail::fail(kOrigin, Errc::bad_string, "empty key");
  check_value(key, v, 0);
  if (key == detail::kAlignmentKey) {
    if (v.type != ValueType::UINT32) {
      detail::fail(kOrigin, Errc::bad_alignment,
                   key + " has type " + detail::describe_type(v) + ", expected UINT32");
    }
    if (!detail::is_pow2(v.u)) {
      detail::fail(kOrigin, Errc::bad_alignment,
                   key + " " + std::to_string(v.u) + " is not a power of two");
    }
  }
  for (auto& kv : kv_) {
    if (kv.first == key) {
      kv.second = std::move(v);
      return;
    }
  }
  kv_.emplace_back(std::move(key), std::move(v));
}

void Writer::add_tensor(std::string name, uint32_t type, std::vector<int64_t> dims,
                        const void* data, size_t nbytes) {
  if (name.empty() || name.size() > detail::kMaxNameBytes) {
    detail::fail(kOrigin, Errc::bad_tensor_name,
                 "tensor name '" + name + "' has " + std::to_string(name.size()) +
                     " bytes, must be 1.." + std::to_string(detail::kMaxNameBytes));
  }
  const std::string subject = "tensor '" + name + "'";
  for (const Pending& p : tensors_) {
    if (p.name == name) detail::fail(kOrigin, Errc::duplicate_tensor, subject + " added twice");
  }
  if (dims.empty() || dims.size() > 4) {
    detail::fail(kOrigin, Errc::bad_dims,
                 subject + " n_dims " + std::to_string(dims.size()) + ", must be 1..4");
  }
  const uint64_t want = detail::tensor_nbytes(kOrigin, subject, type, dims.data(),
                                              static_cast<uint32_t>(dims.size()));
  if (nbytes != want) {
    detail::fail(kOrigin, Errc::bad_dims,
                 subject + " has " + std::to_string(nbytes) + " bytes, its type and dims need " +
                     std::to_string(want));
  }
  const auto* b = static_cast<const uint8_t*>(data);
  tensors_.push_back(Pending{std::move(name), type, std::move(dims), {b, b + nbytes}});
}

uint32_t Writer::alignment() const {
  for (const auto& kv : kv_) {
    if (kv.first == detail::kAlignmentKey && kv.second.type == ValueType::UINT32) {
      return static_cast<uint32_t>(kv.second.u);
    }
  }
  return detail::kDefaultAlignment;
}

std::vector<uint8_t> Writer::meta_bytes() const {
  const uint64_t a = alignment();
  std::vector<uint8_t> out;
  put<uint32_t>(out, detail::kMagic);
  put<uint32_t>(out, 3);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, kv_.size());
  for (const auto& [key, v] : kv_) {
    put_string(out, key);
    put<uint32_t>(out, static_cast<uint32_t>(v.type));
    put_value(out, v);
  }
  uint64_t offset = 0;  // llama.cpp requires the running sum of padded sizes
  for (const Pending& p : tensors_) {
    put_string(out, p.name);
    put<uint32_t>(out, static_cast<uint32_t>(p.dims.size()));
    for (int64_t d : p.dims) put<uint64_t>(out, static_cast<uint64_t>(d));
    put<uint32_t>(out, p.type);
    put<uint64_t>(out, offset);
    offset += pad_to(p.data.size(), a);
  }
  out.resize(pad_to(out.size(), a), 0);
  return out;
}

std::vector<uint8_t> Writer::to_bytes() const {
  const uint64_t a = alignment();
  std::vector<uint8_t> out = meta_bytes();
  for (const Pending& p : tensors_) {
    put(out, p.data.data(), p.data.size());
    out.resize(pad_to(out.size(), a), 0);
  }
  return out;
}

void Writer::write(const std::filesystem::path& path) const {
  const std::string origin = path.string();
  // A unique sibling, renamed over the target only once complete.
  const std::string tmp = origin + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(g_tmp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    detail::fail(origin, Errc::io, "cannot create " + tmp + ": " + std::strerror(errno));
  }
  auto bail = [&](const char* what) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    detail::fail(origin, Errc::io,
                 std::string("cannot ") + what + " " + tmp + ": " + std::strerror(e));
  };
  auto write_all = [&](const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        bail("write");
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  };
  const uint64_t a = alignment();
  const std::vector<uint8_t> meta = meta_bytes();
  write_all(meta.data(), meta.size());
  const std::vector<uint8_t> zeros(a, 0);
  for (const Pending& p : tensors_) {
    write_all(p.data.data(), p.data.size());
    write_all(zeros.data(), pad_to(p.data.size(), a) - p.data.size());
  }
  if (::fsync(fd) != 0) bail("sync");
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    detail::fail(origin, Errc::io, "cannot close " + tmp + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), origin.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    detail::fail(origin, Errc::io, "cannot rename " + tmp + ": " + std::strerror(e));
  }
}

}  // namespace sy::gguf
