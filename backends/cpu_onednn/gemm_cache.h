// F32 GEMM through oneDNN matmul primitives, created once per shape and reused. One cache per
// pool thread: each call runs on the calling thread alone (the pool supplies the parallelism,
// so oneDNN's OpenMP runtime never starts a team of its own).
#pragma once

#include <cstdint>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace sy::cpu_onednn {

class GemmCache {
 public:
  GemmCache();

  // dst[m * ldc + n] = sum_k src[m * k_dim + k] * w[n * k_dim + k] for m < M, n < N: W is N rows
  // of K (a {K, N} matrix in oneDNN's `ba` layout), dst a column window of a wider matrix.
  void run(int64_t m, int64_t k, int64_t n, int64_t ldc, const float* src, const float* w,
           float* dst);

 private:
  struct Key {
    int64_t m, k, n, ldc;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& s) const;
  };
  struct Entry {
    dnnl::matmul prim;
    dnnl::memory::desc src, w, dst;
  };
  const Entry& get(const Key& key);

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::unordered_map<Key, Entry, KeyHash> cache_;
};

}  // namespace sy::cpu_onednn
