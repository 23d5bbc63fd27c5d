// GGUF reader/writer: round trips, llama.cpp's layout, and exact rejections of crafted files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace sy::gguf {
// Readable Errc in gtest failure output.
void PrintTo(Errc c, std::ostream* os) {
  *os << errc_name(c);
}
}  // namespace sy::gguf

namespace {

using sy::gguf::Errc;
using sy::gguf::Error;
using sy::gguf::File;
using sy::gguf::TensorInfo;
using sy::gguf::Value;
using sy::gguf::ValueType;
using sy::gguf::Writer;

constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kI32 = 26, kBF16 = 30;
// Every type the reader accepts, as a refusal lists them.
#define kSupportedTypes                                                                          \
  "F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, " \
  "MXFP4, "                                                                                      \
  "I32"
constexpr uint32_t kTypeU32 = 4, kTypeString = 8, kTypeArray = 9, kTypeU64 = 10;

// Little-endian byte builder for hand-crafted files.
struct Bytes {
  std::vector<uint8_t> b;
  template <class T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
    return *this;
  }
  Bytes& u8(uint8_t v) { return put(v); }
  Bytes& u32(uint32_t v) { return put(v); }
  Bytes& u64(uint64_t v) { return put(v); }
  Bytes& raw(std::string_view s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& str(std::string_view s) { return u64(s.size()).raw(s); }
  Bytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  Bytes& align(size_t a) {
    b.resize((b.size() + a - 1) / a * a, 0);
    return *this;
  }
  Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  Bytes& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(kTypeU32).u32(v); }
  Bytes& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  size_t size() const { return b.size(); }
};

std::unique_ptr<File> Parse(const std::vector<uint8_t>& b) {
  return File::parse(b.data(), b.size(), "t.gguf");
}

// The code and message parsing b fails with; a test failure when it parses.
std::pair<Errc, std::string> Reject(const std::vector<uint8_t>& b) {
  try {
    Parse(b);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  ADD_FAILURE() << "parse accepted the bytes";
  return {Errc::io, ""};
}

template <class F>
std::pair<Errc, std::string> Thrown(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  ADD_FAILURE() << "no Error thrown";
  return {Errc::io, ""};
}

std::pair<Errc, std::string> E(Errc c, std::string m) {
  return {c, std::move(m)};
}

Value U(ValueType t, uint64_t v) {
  Value r;
  r.type = t;
  r.u = v;
  return r;
}
Value I(ValueType t, int64_t v) {
  Value r;
  r.type = t;
  r.i = v;
  return r;
}
Value F(ValueType t, double v) {
  Value r;
  r.type = t;
  r.f = v;
  return r;
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = static_cast<uint8_t>(seed + k * 7);
  return v;
}

// One value of every type, incl. arrays of strings, floats, ints and a nested array.
std::vector<std::pair<std::string, Value>> AllValues() {
  return {
      {"general.architecture", Value::of_str("llama")},
      {"v.u8", U(ValueType::UINT8, 200)},
      {"v.i8", I(ValueType::INT8, -100)},
      {"v.u16", U(ValueType::UINT16, 60000)},
      {"v.i16", I(ValueType::INT16, -30000)},
      {"v.u32", Value::of_u32(4000000000u)},
      {"v.i32", Value::of_i32(-2000000000)},
      {"v.f32", Value::of_f32(1.5e-5f)},
      {"v.bool_t", Value::of_bool(true)},
      {"v.bool_f", Value::of_bool(false)},
      {"v.str", Value::of_str("h\xc3\xa9llo \n world")},
      {"v.empty_str", Value::of_str("")},
      {"v.u64", Value::of_u64(0xfedcba9876543210ull)},
      {"v.i64", I(ValueType::INT64, INT64_MIN)},
      {"v.f64", F(ValueType::FLOAT64, 3.141592653589793)},
      {"v.strs", Value::of_str_array({"<s>", "</s>", "", "\xe2\x96\x81the"})},
      {"v.f32s", Value::of_f32_array({0.0f, -1.25f, 1e30f})},
      {"v.i32s", Value::of_i32_array({0, -1, 2147483647})},
      {"v.u8s",
       Value::of_array(ValueType::UINT8, {U(ValueType::UINT8, 1), U(ValueType::UINT8, 255)})},
      {"v.empty_arr", Value::of_array(ValueType::UINT64, {})},
      {"v.nested",
       Value::of_array(ValueType::ARRAY, {Value::of_i32_array({1, 2}), Value::of_i32_array({}),
                                          Value::of_i32_array({3})})},
      {"v.nested_strs", Value::of_array(ValueType::ARRAY, {Value::of_str_array({"a", "bc"})})},
  };
}

TEST(GgufNames, ErrcAndValueTypeNames) {
  EXPECT_STREQ(sy::gguf::errc_name(Errc::too_many), "too_many");
  EXPECT_STREQ(sy::gguf::errc_name(Errc::truncated), "truncated");
  EXPECT_STREQ(sy::gguf::errc_name(Errc::missing_key), "missing_key");
  EXPECT_STREQ(sy::gguf::value_type_name(ValueType::FLOAT64), "FLOAT64");
  EXPECT_STREQ(sy::gguf::value_type_name(ValueType::ARRAY), "ARRAY");
  EXPECT_STREQ(sy::gguf::value_type_name(static_cast<ValueType>(77)), "unknown");
  const Error e(Errc::overlap, "x: overlap: y");
  EXPECT_EQ(e.code(), Errc::overlap);
  EXPECT_STREQ(e.what(), "x: overlap: y");
}

TEST(GgufRoundTrip, EveryValueType) {
  Writer w;
  const auto kv = AllValues();
  for (const auto& [k, v] : kv) w.set(k, v);
  const std::vector<uint8_t> bytes = w.to_bytes();
  auto f = Parse(bytes);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_TRUE(f->tensors().empty());
  ASSERT_EQ(f->metadata().size(), kv.size());
  for (size_t k = 0; k < kv.size(); ++k) {
    EXPECT_EQ(f->metadata()[k].first, kv[k].first);
    EXPECT_TRUE(f->metadata()[k].second == kv[k].second) << kv[k].first;
    ASSERT_NE(f->find(kv[k].first), nullptr);
    EXPECT_TRUE(*f->find(kv[k].first) == kv[k].second) << kv[k].first;
  }
  EXPECT_EQ(f->metadata(), kv);
  EXPECT_EQ(f->find("absent"), nullptr);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  EXPECT_EQ(f->data_offset(), bytes.size());
  // Writing what was read gives the same bytes.
  Writer again;
  for (const auto& [k, v] : f->metadata()) again.set(k, v);
  EXPECT_EQ(again.to_bytes(), bytes);
}

TEST(GgufRoundTrip, SetReplacesInPlace) {
  Writer w;
  w.set("a", Value::of_u32(1));
  w.set("b", Value::of_u32(2));
  w.set("c", Value::of_u32(3));
  w.set("b", Value::of_str("two"));
  const auto bytes = w.to_bytes();
  auto f = Parse(bytes);
  ASSERT_EQ(f->metadata().size(), 3u);
  EXPECT_EQ(f->metadata()[0].first, "a");
  EXPECT_EQ(f->metadata()[1].first, "b");
  EXPECT_EQ(f->metadata()[2].first, "c");
  EXPECT_EQ(f->get_string("b"), "two");
}

TEST(GgufRoundTrip, ArraysNestEightLevels) {
  Value v = Value::of_array(ValueType::UINT8, {U(ValueType::UINT8, 7)});
  for (int d = 1; d < 8; ++d) v = Value::of_array(ValueType::ARRAY, {v});
  Writer w;
  w.set("deep", v);
  const auto bytes = w.to_bytes();
  EXPECT_TRUE(*Parse(bytes)->find("deep") == v);
  Value deeper = Value::of_array(ValueType::ARRAY, {v});
  EXPECT_EQ(Thrown([&] { w.set("deeper", deeper); }),
            E(Errc::bad_value_type,
              "Writer: bad_value_type: key 'deeper' arrays nest deeper than "
              "8 levels"));
}

struct TensorCase {
  std::string name;
  uint32_t type;
  std::vector<int64_t> dims;
  size_t nbytes;
};

// F32 1-d, F16 2-d, BF16 3-d, Q8_0 4-d (ne0 = 64: two 34-byte blocks a row), I32 1-d.
std::vector<TensorCase> TensorCases() {
  return {
      {"token_embd.weight", kF32, {5}, 20},
      {"blk.0.attn_q.weight", kF16, {3, 2}, 12},
      {"blk.0.ffn_up.weight", kBF16, {2, 3, 4}, 48},
      {"blk.0.ffn_gate_exps.weight", kQ8_0, {64, 2, 1, 3}, 2 * 34 * 6},
      {"ids", kI32, {7}, 28},
  };
}

void CheckTensors(const File& f, const std::vector<TensorCase>& cases,
                  const std::vector<std::vector<uint8_t>>& data, uint64_t align) {
  ASSERT_EQ(f.tensors().size(), cases.size());
  EXPECT_EQ(f.data_offset() % align, 0u);
  uint64_t expect_offset = 0;  // llama.cpp: running sum of sizes padded to the alignment
  for (size_t k = 0; k < cases.size(); ++k) {
    const TensorInfo& t = f.tensors()[k];
    SCOPED_TRACE(cases[k].name);
    EXPECT_EQ(t.name, cases[k].name);
    EXPECT_EQ(t.type, cases[k].type);
    EXPECT_EQ(t.n_dims, cases[k].dims.size());
    int64_t n = 1;
    for (size_t d = 0; d < 4; ++d) {
      const int64_t want = d < cases[k].dims.size() ? cases[k].dims[d] : 1;
      EXPECT_EQ(t.ne[d], want);
      n *= want;
    }
    EXPECT_EQ(t.n_elements(), n);
    EXPECT_EQ(t.nbytes, cases[k].nbytes);
    EXPECT_EQ(t.offset, expect_offset);
    ASSERT_NE(t.data, nullptr);
    EXPECT_EQ(std::memcmp(t.data, data[k].data(), data[k].size()), 0);
    EXPECT_EQ(f.find_tensor(cases[k].name), &t);
    expect_offset += (t.nbytes + align - 1) / align * align;
  }
  EXPECT_EQ(f.find_tensor("missing"), nullptr);
}

TEST(GgufRoundTrip, TensorsOfEachType) {
  Writer w;
  w.set("general.architecture", Value::of_str("llama"));
  w.set("general.quantization_version", Value::of_u32(2));
  const auto cases = TensorCases();
  std::vector<std::vector<uint8_t>> data;
  for (size_t k = 0; k < cases.size(); ++k) {
    data.push_back(Pattern(cases[k].nbytes, static_cast<uint8_t>(k * 31 + 1)));
    w.add_tensor(cases[k].name, cases[k].type, cases[k].dims, data[k].data(), data[k].size());
  }
  const auto bytes = w.to_bytes();
  auto f = Parse(bytes);
  CheckTensors(*f, cases, data, 32);
  // Offsets 0, 32, 64, 128, 544; each tensor padded with zeros, the last one too.
  EXPECT_EQ(f->tensors()[3].offset, 128u);
  EXPECT_EQ(f->tensors()[4].offset, 544u);
  EXPECT_EQ(bytes.size(), f->data_offset() + 576);
  for (size_t p = f->data_offset() + 20; p < f->data_offset() + 32; ++p) EXPECT_EQ(bytes[p], 0);
  for (size_t p = f->data_offset() + 544 + 28; p < bytes.size(); ++p) EXPECT_EQ(bytes[p], 0);
  EXPECT_EQ(f->get_uint("general.quantization_version"), 2u);
}

TEST(GgufRoundTrip, CustomAlignment) {
  Writer w;
  w.set("general.alignment", Value::of_u32(64));
  const auto cases = TensorCases();
  std::vector<std::vector<uint8_t>> data;
  for (size_t k = 0; k < cases.size(); ++k) {
    data.push_back(Pattern(cases[k].nbytes, static_cast<uint8_t>(k + 5)));
    w.add_tensor(cases[k].name, cases[k].type, cases[k].dims, data[k].data(), data[k].size());
  }
  const auto bytes = w.to_bytes();
  auto f = Parse(bytes);
  EXPECT_EQ(f->alignment(), 64u);
  CheckTensors(*f, cases, data, 64);
  EXPECT_EQ(f->tensors()[4].offset, 64u * 3 + 448);
}

// The writer's bytes are exactly the documented layout.
TEST(GgufRoundTrip, WriterBytesMatchLayout) {
  Writer w;
  w.set("general.architecture", Value::of_str("llama"));
  const std::vector<uint8_t> a = Pattern(8, 1), b = Pattern(4, 9);
  w.add_tensor("a", kF32, {2}, a.data(), a.size());
  w.add_tensor("b", kF16, {2}, b.data(), b.size());
  Bytes want;
  want.header(2, 1).str("general.architecture").u32(kTypeString).str("llama");
  want.tensor("a", {2}, kF32, 0).tensor("b", {2}, kF16, 32).align(32);
  want.b.insert(want.b.end(), a.begin(), a.end());
  want.align(32);
  want.b.insert(want.b.end(), b.begin(), b.end());
  want.align(32);
  EXPECT_EQ(w.to_bytes(), want.b);
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("sy_gguf_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(GgufFile, WriteThenOpen) {
  TempDir dir;
  const auto path = dir.path / "m.gguf";
  Writer w;
  for (const auto& [k, v] : AllValues()) w.set(k, v);
  const auto cases = TensorCases();
  std::vector<std::vector<uint8_t>> data;
  for (size_t k = 0; k < cases.size(); ++k) {
    data.push_back(Pattern(cases[k].nbytes, static_cast<uint8_t>(k + 77)));
    w.add_tensor(cases[k].name, cases[k].type, cases[k].dims, data[k].data(), data[k].size());
  }
  w.write(path);
  w.write(path);  // replaces the file
  // No temporary left beside it.
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], path);
  EXPECT_EQ(std::filesystem::file_size(path), w.to_bytes().size());

  auto f = File::open(path);
  EXPECT_EQ(f->origin(), path.string());
  EXPECT_EQ(f->metadata(), AllValues());
  CheckTensors(*f, cases, data, 32);
}

// Resident kB of the mapping that holds p (/proc/self/smaps), or -1.
long MappingRssKb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  const auto a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(' ') > line.find('-')) {
      in = a >= lo && a < hi;
    } else if (in && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

// release() hands a mapped tensor's pages back (a packed weight's original bytes) and the bytes
// read the same afterwards, faulted in again from the file; on a file parsed from memory it
// touches nothing.
TEST(GgufFile, ReleaseDropsMappedPagesAndKeepsTheBytes) {
  TempDir dir;
  const auto path = dir.path / "m.gguf";
  const size_t n = 1 << 20;  // 4 MiB of F32
  const std::vector<uint8_t> data = Pattern(4 * n, 9);
  Writer w;
  w.add_tensor("big", kF32, {static_cast<int64_t>(n)}, data.data(), data.size());
  w.write(path);
  auto f = File::open(path);
  const TensorInfo* t = f->find_tensor("big");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(std::memcmp(t->data, data.data(), data.size()), 0);  // every page touched
  const long before = MappingRssKb(t->data);
  ASSERT_GE(before, 4000);
  f->release(t->data, t->nbytes);
  const long after = MappingRssKb(t->data);
  EXPECT_LE(after, before - 4000) << "before " << before << " kB";
  EXPECT_EQ(std::memcmp(t->data, data.data(), data.size()), 0);
  EXPECT_GE(MappingRssKb(t->data), 4000);

  const std::vector<uint8_t> bytes = w.to_bytes();
  auto m = File::parse(bytes.data(), bytes.size(), "mem.gguf");
  const TensorInfo* tm = m->find_tensor("big");
  m->release(tm->data, tm->nbytes);
  EXPECT_EQ(std::memcmp(tm->data, data.data(), data.size()), 0);
}

TEST(GgufFile, OpenErrors) {
  TempDir dir;
  const auto missing = dir.path / "missing.gguf";
  EXPECT_EQ(Thrown([&] { File::open(missing); }),
            E(Errc::io, missing.string() + ": io: cannot open: No such file or directory"));
  EXPECT_EQ(Thrown([&] { File::open(dir.path); }),
            E(Errc::io, dir.path.string() + ": io: not a regular file"));
  const auto empty = dir.path / "empty.gguf";
  std::ofstream(empty).close();
  EXPECT_EQ(
      Thrown([&] { File::open(empty); }),
      E(Errc::truncated, empty.string() + ": truncated: magic at offset 0 needs 4 bytes, 0 left"));
  const auto bad = dir.path / "bad.gguf";
  {
    std::ofstream o(bad, std::ios::binary);
    o.write("GGUF\x04\0\0\0", 8);
  }
  EXPECT_EQ(Thrown([&] { File::open(bad); }),
            E(Errc::bad_version,
              bad.string() + ": bad_version: version 4 not supported (expected 3 or 2)"));
}

TEST(GgufFile, WriteErrors) {
  TempDir dir;
  const auto path = dir.path / "no_such_dir" / "m.gguf";
  Writer w;
  auto [code, msg] = Thrown([&] { w.write(path); });
  EXPECT_EQ(code, Errc::io);
  const std::string prefix = path.string() + ": io: cannot create " + path.string() + ".tmp.";
  EXPECT_EQ(msg.substr(0, prefix.size()), prefix);
  const std::string suffix = ": No such file or directory";
  ASSERT_GE(msg.size(), suffix.size());
  EXPECT_EQ(msg.substr(msg.size() - suffix.size()), suffix);
}

TEST(GgufLookup, TypedGetters) {
  Writer w;
  for (const auto& [k, v] : AllValues()) w.set(k, v);
  w.set("neg", Value::of_i32(-1));
  w.set("big", Value::of_u64(UINT64_MAX));
  const auto bytes = w.to_bytes();
  auto f = Parse(bytes);
  EXPECT_EQ(f->get_uint("v.u8"), 200u);
  EXPECT_EQ(f->get_uint("v.u32"), 4000000000u);
  EXPECT_EQ(f->get_uint("v.u64"), 0xfedcba9876543210ull);
  EXPECT_EQ(f->get_int("v.i8"), -100);
  EXPECT_EQ(f->get_int("v.i64"), INT64_MIN);
  EXPECT_EQ(f->get_int("v.u16"), 60000);  // integers convert when in range
  EXPECT_EQ(f->get_float("v.f32"), static_cast<double>(1.5e-5f));
  EXPECT_EQ(f->get_float("v.f64"), 3.141592653589793);
  EXPECT_EQ(f->get_bool("v.bool_t"), true);
  EXPECT_EQ(f->get_bool("v.bool_f"), false);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_uint("absent"), std::nullopt);
  EXPECT_EQ(f->get_int("absent"), std::nullopt);
  EXPECT_EQ(f->get_float("absent"), std::nullopt);
  EXPECT_EQ(f->get_bool("absent"), std::nullopt);
  EXPECT_EQ(f->get_string("absent"), std::nullopt);
  EXPECT_EQ(f->require_uint("v.u16"), 60000u);
  EXPECT_EQ(f->require_string("v.str"), "h\xc3\xa9llo \n world");

  EXPECT_EQ(
      Thrown([&] { f->get_uint("v.str"); }),
      E(Errc::wrong_type, "t.gguf: wrong_type: key 'v.str' has type STRING, expected UINT64"));
  EXPECT_EQ(Thrown([&] { f->get_uint("neg"); }),
            E(Errc::wrong_type,
              "t.gguf: wrong_type: key 'neg' has type INT32 with value -1, out of "
              "range for UINT64"));
  EXPECT_EQ(Thrown([&] { f->get_int("big"); }),
            E(Errc::wrong_type,
              "t.gguf: wrong_type: key 'big' has type UINT64 with value "
              "18446744073709551615, out of range for INT64"));
  EXPECT_EQ(
      Thrown([&] { f->get_int("v.f64"); }),
      E(Errc::wrong_type, "t.gguf: wrong_type: key 'v.f64' has type FLOAT64, expected INT64"));
  EXPECT_EQ(Thrown([&] { f->get_float("v.u32"); }),
            E(Errc::wrong_type,
              "t.gguf: wrong_type: key 'v.u32' has type UINT32, expected FLOAT32 "
              "or FLOAT64"));
  EXPECT_EQ(Thrown([&] { f->get_bool("v.u8"); }),
            E(Errc::wrong_type, "t.gguf: wrong_type: key 'v.u8' has type UINT8, expected BOOL"));
  EXPECT_EQ(Thrown([&] { f->get_string("v.strs"); }),
            E(Errc::wrong_type,
              "t.gguf: wrong_type: key 'v.strs' has type ARRAY of STRING, "
              "expected STRING"));
  EXPECT_EQ(
      Thrown([&] { f->get_uint("v.bool_t"); }),
      E(Errc::wrong_type, "t.gguf: wrong_type: key 'v.bool_t' has type BOOL, expected UINT64"));
  EXPECT_EQ(Thrown([&] { f->require_uint("nope"); }),
            E(Errc::missing_key, "t.gguf: missing_key: key 'nope' not found"));
  EXPECT_EQ(Thrown([&] { f->require_string("nope"); }),
            E(Errc::missing_key, "t.gguf: missing_key: key 'nope' not found"));
  EXPECT_EQ(Thrown([&] { f->require_string("v.u8"); }),
            E(Errc::wrong_type, "t.gguf: wrong_type: key 'v.u8' has type UINT8, expected STRING"));
}

// A file with metadata and tensors whose last tensor is not a multiple of the alignment.
std::vector<uint8_t> SampleFile() {
  Writer w;
  for (const auto& [k, v] : AllValues()) w.set(k, v);
  const auto cases = TensorCases();
  for (size_t k = 0; k < cases.size(); ++k) {
    const auto d = Pattern(cases[k].nbytes, static_cast<uint8_t>(k));
    w.add_tensor(cases[k].name, cases[k].type, cases[k].dims, d.data(), d.size());
  }
  return w.to_bytes();
}

TEST(GgufReject, TruncatedAtEveryLength) {
  const std::vector<uint8_t> full = SampleFile();
  auto f = Parse(full);
  const TensorInfo& last = f->tensors().back();
  const size_t needed = f->data_offset() + last.offset + last.nbytes;
  ASSERT_LT(needed, full.size());  // the last tensor's padding is optional
  for (size_t len = 0; len < full.size(); ++len) {
    // A copy of exactly len bytes, so reading past it is caught by sanitizers too.
    std::vector<uint8_t> cut(full.begin(), full.begin() + len);
    if (len < needed) {
      EXPECT_THROW(File::parse(cut.data(), cut.size(), "cut"), Error) << "length " << len;
    } else {
      EXPECT_NO_THROW(File::parse(cut.data(), cut.size(), "cut")) << "length " << len;
    }
  }
}

// Corrupting any metadata byte either still parses or throws Error; never a crash or bad_alloc.
TEST(GgufReject, CorruptedBytesNeverCrash) {
  const std::vector<uint8_t> full = SampleFile();
  const size_t meta = Parse(full)->data_offset();
  size_t rejected = 0;
  for (size_t p = 0; p < meta; ++p) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0x7f}, uint8_t{0xff}}) {
      if (full[p] == v) continue;
      std::vector<uint8_t> bad = full;
      bad[p] = v;
      try {
        Parse(bad);
      } catch (const Error&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, meta);  // most corruptions are caught
}

TEST(GgufReject, Truncated) {
  EXPECT_EQ(Reject({}), E(Errc::truncated,
                          "t.gguf: truncated: magic at offset 0 needs 4 bytes, 0 "
                          "left"));
  Bytes b;
  b.u32(0x46554747).u32(3).u32(0);
  EXPECT_EQ(Reject(b.b), E(Errc::truncated,
                           "t.gguf: truncated: tensor_count at offset 8 needs 8 "
                           "bytes, 4 left"));
  Bytes kv;
  kv.header(0, 1).str("k").u32(kTypeU64).u32(0).u8(0);  // 5 of the 8 value bytes
  EXPECT_EQ(Reject(kv.b), E(Errc::truncated,
                            "t.gguf: truncated: key 'k' value at offset 37 needs "
                            "8 bytes, 5 left"));
  Bytes t;
  t.header(1, 0).str("w").u32(3).u64(4).u64(3).u64(2);  // type and offset missing
  EXPECT_EQ(Reject(t.b), E(Errc::truncated,
                           "t.gguf: truncated: tensor 'w' type at offset 61 needs "
                           "4 bytes, 0 left"));
}

TEST(GgufReject, BadMagic) {
  Bytes b;
  b.u32(0x12345678).u32(3).u64(0).u64(0);
  EXPECT_EQ(Reject(b.b), E(Errc::bad_magic,
                           "t.gguf: bad_magic: not a GGUF file (it does not start with 'GGUF')"));
}

// A load error never quotes what the file holds: not the start of a file that is not a GGUF,
// and names from a GGUF only as escaped, bounded text.
TEST(GgufReject, ErrorsDoNotQuoteFileContents) {
  const std::string passwd = "root:x:0:0:root:/root:/bin/bash\n";
  try {
    sy::gguf::File::parse(reinterpret_cast<const uint8_t*>(passwd.data()), passwd.size(), "p");
    FAIL();
  } catch (const sy::gguf::Error& e) {
    EXPECT_EQ(std::string(e.what()).find("root"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("0x746f6f72"), std::string::npos) << e.what();
  }
  const std::string red = "\x1b[31mred\x1b[0m";
  EXPECT_EQ(Reject(Bytes().header(0, 2).kv_u32(red, 1).kv_u32(red, 2).b),
            E(Errc::duplicate_key,
              "t.gguf: duplicate_key: key '\\x1b[31mred\\x1b[0m' at offset 52 (kv 1) repeats "
              "kv 0"));
}

TEST(GgufReject, BadVersion) {
  EXPECT_EQ(Reject(Bytes().header(0, 0, 4).b),
            E(Errc::bad_version, "t.gguf: bad_version: version 4 not supported (expected 3 or 2)"));
  EXPECT_EQ(Reject(Bytes().header(0, 0, 1).b),
            E(Errc::bad_version, "t.gguf: bad_version: version 1 not supported (expected 3 or 2)"));
  const auto v2 = Bytes().header(0, 1, 2).kv_u32("k", 5).b;
  auto f = Parse(v2);
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->get_uint("k"), 5u);
}

// Huge counts fail as too_many before anything is reserved for them (a reserve of 2^60 entries
// would throw std::length_error or bad_alloc instead of Error).
TEST(GgufReject, TooManyCounts) {
  EXPECT_EQ(Reject(Bytes().header(1ull << 60, 0).zeros(100).b),
            E(Errc::too_many,
              "t.gguf: too_many: tensor_count 1152921504606846976 cannot fit in "
              "the 100 bytes left (each tensor info needs at least 33)"));
  EXPECT_EQ(Reject(Bytes().header(0, 1ull << 60).zeros(100).b),
            E(Errc::too_many,
              "t.gguf: too_many: kv_count 1152921504606846976 cannot fit in the "
              "100 bytes left (each pair needs at least 14)"));
  EXPECT_EQ(Reject(Bytes().header(UINT64_MAX, UINT64_MAX).b),
            E(Errc::too_many,
              "t.gguf: too_many: tensor_count 18446744073709551615 cannot fit in "
              "the 0 bytes left (each tensor info needs at least 33)"));
  EXPECT_EQ(Reject(Bytes().header(2, 2).zeros(90).b),
            E(Errc::too_many,
              "t.gguf: too_many: kv_count 2 and tensor_count 2 need at least 94 "
              "bytes, 90 left"));
  // Metadata that leaves too little room for the tensor infos.
  Bytes b;
  b.header(1, 1).str("k").u32(kTypeString).str(std::string(30, 'x'));
  EXPECT_EQ(Reject(b.b), E(Errc::too_many,
                           "t.gguf: too_many: tensor_count 1 cannot fit in the 0 "
                           "bytes left after the metadata (each needs at least "
                           "33)"));
}

TEST(GgufReject, OversizeStrings) {
  EXPECT_EQ(Reject(Bytes().header(0, 1).u64(1000).zeros(20).b),
            E(Errc::bad_string,
              "t.gguf: bad_string: kv 0 key at offset 24 has length 1000, over "
              "the 20 bytes left"));
  EXPECT_EQ(Reject(Bytes().header(0, 1).str("k").u32(kTypeString).u64(1ull << 62).zeros(4).b),
            E(Errc::bad_string,
              "t.gguf: bad_string: key 'k' string at offset 37 has length "
              "4611686018427387904, over the 4 bytes left"));
  EXPECT_EQ(Reject(Bytes().header(0, 1).u64(0).u32(kTypeU32).u32(1).b),
            E(Errc::bad_string, "t.gguf: bad_string: kv 0 key at offset 24 is empty"));
  Bytes t;
  t.header(1, 0).u64(UINT64_MAX).zeros(40);
  EXPECT_EQ(Reject(t.b), E(Errc::bad_string,
                           "t.gguf: bad_string: tensor 0 name at offset 24 has "
                           "length 18446744073709551615, over the 40 bytes "
                           "left"));
}

TEST(GgufReject, OversizeArrays) {
  EXPECT_EQ(
      Reject(
          Bytes().header(0, 1).str("arr").u32(kTypeArray).u32(kTypeU32).u64(1ull << 40).zeros(8).b),
      E(Errc::too_many,
        "t.gguf: too_many: key 'arr' array at offset 39 of 1099511627776 "
        "UINT32 cannot fit in the 8 bytes left (each needs at least 4)"));
  // Strings need at least their 8-byte length each.
  EXPECT_EQ(Reject(Bytes().header(0, 1).str("s").u32(kTypeArray).u32(kTypeString).u64(2).u64(0).b),
            E(Errc::too_many,
              "t.gguf: too_many: key 's' array at offset 37 of 2 STRING cannot fit "
              "in the 8 bytes left (each needs at least 8)"));
  // A nested array's count is checked the same way.
  EXPECT_EQ(Reject(Bytes()
                       .header(0, 1)
                       .str("n")
                       .u32(kTypeArray)
                       .u32(kTypeArray)
                       .u64(1)
                       .u32(kTypeU64)
                       .u64(UINT64_MAX)
                       .b),
            E(Errc::too_many,
              "t.gguf: too_many: key 'n' array at offset 49 of "
              "18446744073709551615 UINT64 cannot fit in the 0 bytes left (each "
              "needs at least 8)"));
}

TEST(GgufReject, BadValueTypes) {
  EXPECT_EQ(Reject(Bytes().header(0, 1).str("k").u32(13).u32(0).b),
            E(Errc::bad_value_type,
              "t.gguf: bad_value_type: key 'k' value type 13 at offset 33 "
              "unknown"));
  EXPECT_EQ(Reject(Bytes().header(0, 1).str("k").u32(kTypeArray).u32(99).u64(0).b),
            E(Errc::bad_value_type,
              "t.gguf: bad_value_type: key 'k' array element type 99 at "
              "offset 37 unknown"));
  EXPECT_EQ(Reject(Bytes().header(0, 1).str("b").u32(7).u8(2).b),
            E(Errc::bad_value_type,
              "t.gguf: bad_value_type: key 'b' BOOL at offset 37 is 2, "
              "expected 0 or 1"));
  Bytes deep;
  deep.header(0, 1).str("k").u32(kTypeArray);
  for (int d = 0; d < 8; ++d) deep.u32(kTypeArray).u64(1);
  deep.u32(0).u64(0);
  EXPECT_EQ(Reject(deep.b), E(Errc::bad_value_type,
                              "t.gguf: bad_value_type: key 'k' array at "
                              "offset 133 nests deeper than 8 levels"));
}

TEST(GgufReject, DuplicateKey) {
  EXPECT_EQ(Reject(Bytes().header(0, 2).kv_u32("a", 1).kv_u32("a", 2).b),
            E(Errc::duplicate_key,
              "t.gguf: duplicate_key: key 'a' at offset 41 (kv 1) repeats kv "
              "0"));
}

TEST(GgufReject, BadAlignment) {
  EXPECT_EQ(Reject(Bytes().header(0, 1).kv_u32("general.alignment", 48).b),
            E(Errc::bad_alignment,
              "t.gguf: bad_alignment: general.alignment 48 is not a power of "
              "two"));
  EXPECT_EQ(Reject(Bytes().header(0, 1).kv_u32("general.alignment", 0).b),
            E(Errc::bad_alignment,
              "t.gguf: bad_alignment: general.alignment 0 is not a power of "
              "two"));
  EXPECT_EQ(Reject(Bytes().header(0, 1).str("general.alignment").u32(kTypeU64).u64(32).b),
            E(Errc::bad_alignment,
              "t.gguf: bad_alignment: general.alignment has type UINT64, "
              "expected UINT32"));
  // A valid smaller alignment allows offsets the default would refuse.
  Bytes ok;
  ok.header(2, 1).kv_u32("general.alignment", 8).tensor("a", {2}, kF32, 0);
  ok.tensor("b", {2}, kF32, 8).align(8).zeros(16);
  auto f = Parse(ok.b);
  EXPECT_EQ(f->alignment(), 8u);
  EXPECT_EQ(f->tensors()[1].offset, 8u);
}

TEST(GgufReject, TensorNames) {
  const std::string n64(64, 'n');
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor(n64, {4}, kF32, 0).align(32).zeros(16).b),
            E(Errc::bad_tensor_name,
              "t.gguf: bad_tensor_name: tensor 0 name at offset 24 has 64 "
              "bytes, must be 1..63"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("", {4}, kF32, 0).align(32).zeros(16).b),
            E(Errc::bad_tensor_name,
              "t.gguf: bad_tensor_name: tensor 0 name at offset 24 has 0 "
              "bytes, must be 1..63"));
  const std::string n63(63, 'n');
  auto f = Parse(Bytes().header(1, 0).tensor(n63, {4}, kF32, 0).align(32).zeros(16).b);
  EXPECT_EQ(f->tensors()[0].name, n63);
  EXPECT_EQ(Reject(Bytes()
                       .header(2, 0)
                       .tensor("w", {8}, kF32, 0)
                       .tensor("w", {8}, kF32, 32)
                       .align(32)
                       .zeros(64)
                       .b),
            E(Errc::duplicate_tensor,
              "t.gguf: duplicate_tensor: tensor 'w' (tensor 1) repeats "
              "tensor 0"));
}

TEST(GgufReject, BadDims) {
  Bytes five;
  five.header(1, 0).str("w").u32(5);
  for (int d = 0; d < 5; ++d) five.u64(1);
  five.u32(kF32).u64(0).align(32).zeros(4);
  EXPECT_EQ(Reject(five.b),
            E(Errc::bad_dims, "t.gguf: bad_dims: tensor 'w' n_dims 5, must be 1..4"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).str("w").u32(0).u32(kF32).u64(0).zeros(40).b),
            E(Errc::bad_dims, "t.gguf: bad_dims: tensor 'w' n_dims 0, must be 1..4"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {4, 0}, kF32, 0).align(32).zeros(16).b),
            E(Errc::bad_dims, "t.gguf: bad_dims: tensor 'w' ne[1] = 0, must be >= 1"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {1ull << 63}, kF32, 0).align(32).b),
            E(Errc::bad_dims,
              "t.gguf: bad_dims: tensor 'w' ne[0] = -9223372036854775808, must be "
              ">= 1"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {1ull << 32, 1ull << 32}, kF32, 0).align(32).b),
            E(Errc::bad_dims, "t.gguf: bad_dims: tensor 'w' element count overflows int64"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {1ull << 31, 1ull << 31}, kF32, 0).align(32).b),
            E(Errc::bad_dims, "t.gguf: bad_dims: tensor 'w' byte size overflows uint64"));
}

TEST(GgufReject, BadTensorType) {
  // A type ggml has but Switchyard does not implement is named; the refusal lists what is.
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {256}, 16, 0).align(32).zeros(66).b),
            E(Errc::bad_tensor_type,
              "t.gguf: bad_tensor_type: tensor 'w' type 16 (IQ2_XXS) is not supported; "
              "supported types: " kSupportedTypes));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {4}, 1000, 0).align(32).zeros(32).b),
            E(Errc::bad_tensor_type,
              "t.gguf: bad_tensor_type: tensor 'w' type 1000 is unknown; supported "
              "types: " kSupportedTypes));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {33}, kQ8_0, 0).align(32).zeros(64).b),
            E(Errc::bad_tensor_type,
              "t.gguf: bad_tensor_type: tensor 'w' ne[0] = 33 is not a "
              "multiple of the Q8_0 block size 32"));
}

TEST(GgufReject, MisalignedOffset) {
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {4}, kF32, 16).align(32).zeros(64).b),
            E(Errc::misaligned_offset,
              "t.gguf: misaligned_offset: tensor 'w' offset 16 is not a "
              "multiple of the alignment 32"));
}

TEST(GgufReject, TensorPastEndOfFile) {
  // Info ends at 57, so the data section starts at 64; 32 of the 64 bytes are present.
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {16}, kF32, 0).align(32).zeros(32).b),
            E(Errc::out_of_bounds,
              "t.gguf: out_of_bounds: tensor 'w' offset 0 size 64 (data "
              "section at 64) runs past the end of the file (96 bytes)"));
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {16}, kF32, 1ull << 63).align(32).zeros(64).b),
            E(Errc::out_of_bounds,
              "t.gguf: out_of_bounds: tensor 'w' offset 9223372036854775808 "
              "size 64 (data section at 64) runs past the end of the file "
              "(128 bytes)"));
  // The data section itself is missing.
  EXPECT_EQ(Reject(Bytes().header(1, 0).tensor("w", {16}, kF32, 0).b),
            E(Errc::out_of_bounds,
              "t.gguf: out_of_bounds: tensor 'w' offset 0 size 64 (data "
              "section at 64) runs past the end of the file (57 bytes)"));
}

TEST(GgufReject, OverlappingTensors) {
  // Two infos end at 90: data at 96. 'a' is [0, 64), 'b' is [32, 96).
  EXPECT_EQ(Reject(Bytes()
                       .header(2, 0)
                       .tensor("a", {16}, kF32, 0)
                       .tensor("b", {16}, kF32, 32)
                       .align(32)
                       .zeros(96)
                       .b),
            E(Errc::overlap,
              "t.gguf: overlap: tensor 'b' at offset 32 overlaps tensor 'a' at "
              "offset 0 size 64"));
  EXPECT_EQ(Reject(Bytes()
                       .header(2, 0)
                       .tensor("a", {16}, kF32, 32)
                       .tensor("b", {16}, kF32, 0)
                       .align(32)
                       .zeros(96)
                       .b),
            E(Errc::overlap,
              "t.gguf: overlap: tensor 'a' at offset 32 overlaps tensor 'b' at "
              "offset 0 size 64"));
  EXPECT_EQ(Reject(Bytes()
                       .header(2, 0)
                       .tensor("a", {4}, kF32, 0)
                       .tensor("b", {4}, kF32, 0)
                       .align(32)
                       .zeros(32)
                       .b),
            E(Errc::overlap,
              "t.gguf: overlap: tensor 'b' at offset 0 overlaps tensor 'a' at "
              "offset 0 size 16"));
}

// Not llama.cpp's packing, but aligned and disjoint: accepted, with data pointers into the bytes.
TEST(GgufReject, AcceptsGapsAndAnyOrder) {
  Bytes b;
  b.header(2, 0).tensor("a", {16}, kF32, 128).tensor("b", {8}, kF32, 0).align(32);
  const size_t data = b.size();
  b.zeros(192);
  b.b[data + 128] = 0xaa;
  b.b[data] = 0xbb;
  auto f = Parse(b.b);
  EXPECT_EQ(f->data_offset(), 96u);
  EXPECT_EQ(f->tensors()[0].data, b.b.data() + 96 + 128);
  EXPECT_EQ(f->tensors()[0].data[0], 0xaa);
  EXPECT_EQ(f->tensors()[1].data[0], 0xbb);
}

TEST(GgufWriter, RefusesWhatTheReaderWould) {
  Writer w;
  const std::vector<uint8_t> d(64, 0);
  const std::string n64(64, 'n');
  EXPECT_EQ(Thrown([&] { w.add_tensor(n64, kF32, {4}, d.data(), 16); }),
            E(Errc::bad_tensor_name,
              "Writer: bad_tensor_name: tensor name '" + n64 + "' has 64 bytes, must be 1..63"));
  EXPECT_EQ(Thrown([&] { w.add_tensor("w", kF32, {4}, d.data(), 12); }),
            E(Errc::bad_dims,
              "Writer: bad_dims: tensor 'w' has 12 bytes, its type and dims need "
              "16"));
  EXPECT_EQ(Thrown([&] {
              w.add_tensor("w", kF32, {1, 1, 1, 1, 1}, d.data(), 4);
            }),
            E(Errc::bad_dims, "Writer: bad_dims: tensor 'w' n_dims 5, must be 1..4"));
  EXPECT_EQ(Thrown([&] {
              w.add_tensor("w", kF32, {4, 0}, d.data(), 0);
            }),
            E(Errc::bad_dims, "Writer: bad_dims: tensor 'w' ne[1] = 0, must be >= 1"));
  EXPECT_EQ(Thrown([&] { w.add_tensor("w", 15, {256}, d.data(), 292); }),
            E(Errc::bad_tensor_type,
              "Writer: bad_tensor_type: tensor 'w' type 15 (Q8_K) is not supported; supported "
              "types: " kSupportedTypes));
  EXPECT_EQ(Thrown([&] { w.add_tensor("w", kQ8_0, {16}, d.data(), 17); }),
            E(Errc::bad_tensor_type,
              "Writer: bad_tensor_type: tensor 'w' ne[0] = 16 is not a "
              "multiple of the Q8_0 block size 32"));
  w.add_tensor("w", kF32, {4}, d.data(), 16);
  EXPECT_EQ(Thrown([&] { w.add_tensor("w", kF32, {4}, d.data(), 16); }),
            E(Errc::duplicate_tensor, "Writer: duplicate_tensor: tensor 'w' added twice"));

  EXPECT_EQ(Thrown([&] { w.set("general.alignment", Value::of_u32(48)); }),
            E(Errc::bad_alignment,
              "Writer: bad_alignment: general.alignment 48 is not a power of "
              "two"));
  EXPECT_EQ(Thrown([&] { w.set("general.alignment", Value::of_u64(64)); }),
            E(Errc::bad_alignment,
              "Writer: bad_alignment: general.alignment has type UINT64, "
              "expected UINT32"));
  EXPECT_EQ(Thrown([&] { w.set("k", U(ValueType::UINT8, 300)); }),
            E(Errc::bad_value_type,
              "Writer: bad_value_type: key 'k' UINT8 value 300 out of "
              "range"));
  EXPECT_EQ(Thrown([&] {
              w.set("k", Value::of_array(ValueType::INT32, {Value::of_i32(1), Value::of_u32(2)}));
            }),
            E(Errc::bad_value_type,
              "Writer: bad_value_type: key 'k' array element 1 has type "
              "UINT32, expected INT32"));
  EXPECT_EQ(Thrown([&] { w.set("", Value::of_u32(1)); }),
            E(Errc::bad_string, "Writer: bad_string: empty key"));
  // Nothing refused was kept.
  auto bytes = w.to_bytes();
  auto f = Parse(bytes);
  EXPECT_TRUE(f->metadata().empty());
  ASSERT_EQ(f->tensors().size(), 1u);
}

}  // namespace
