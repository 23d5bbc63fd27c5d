#include "bench/read_probe.h"

#include <immintrin.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "host/host_api.h"  // now_ns

namespace sy::bench {
namespace {

// Sums of n 64-bit words (n a multiple of kStride) read as S streams, the S equal parts of the
// range in lockstep, with the widest loads this CPU has. Which reads fastest depends on the
// core's prefetchers, so the probe takes the best of two:
// - one stream, software-prefetched 4 KiB ahead (as the decode kernels read their weights):
//   the hardware prefetcher alone left an Intel core well below its share of the bandwidth;
// - four streams, no software prefetch: on an AMD EPYC (Zen 5) 39 / 69 GB/s on 1 / 2 threads,
//   where the single prefetched stream read 31 / 55 and an F32 decode already moved ~60.
constexpr size_t kStride = 4 * 32;  // words: four streams of whole 256-byte steps
template <int S, bool Prefetch>
__attribute__((target("avx512f"))) uint64_t stream_sum_avx512(const uint64_t* p, size_t n) {
  __m512i s[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                  _mm512_setzero_si512()};
  const size_t len = n / S;
  for (size_t i = 0; i < len; i += 32)
    for (int t = 0; t < S; ++t) {
      const uint64_t* q = p + t * len + i;
      if (Prefetch) _mm_prefetch((const char*)q + 4096, _MM_HINT_T0);
      for (int k = 0; k < 4; ++k) s[k] = _mm512_add_epi64(s[k], _mm512_loadu_si512(q + 8 * k));
    }
  return (uint64_t)_mm512_reduce_add_epi64(
      _mm512_add_epi64(_mm512_add_epi64(s[0], s[1]), _mm512_add_epi64(s[2], s[3])));
}
template <int S, bool Prefetch>
__attribute__((target("avx2"))) uint64_t stream_sum_avx2(const uint64_t* p, size_t n) {
  __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                  _mm256_setzero_si256()};
  const size_t len = n / S;
  for (size_t i = 0; i < len; i += 16)
    for (int t = 0; t < S; ++t) {
      const uint64_t* q = p + t * len + i;
      if (Prefetch) _mm_prefetch((const char*)q + 4096, _MM_HINT_T0);
      for (int k = 0; k < 4; ++k)
        s[k] = _mm256_add_epi64(s[k], _mm256_loadu_si256((const __m256i*)(q + 4 * k)));
    }
  uint64_t out[4];
  _mm256_storeu_si256((__m256i*)out,
                      _mm256_add_epi64(_mm256_add_epi64(s[0], s[1]), _mm256_add_epi64(s[2], s[3])));
  return out[0] + out[1] + out[2] + out[3];
}
template <int S, bool Prefetch>
uint64_t stream_sum(const uint64_t* p, size_t n) {
  if (__builtin_cpu_supports("avx512f")) return stream_sum_avx512<S, Prefetch>(p, n);
  if (__builtin_cpu_supports("avx2")) return stream_sum_avx2<S, Prefetch>(p, n);
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  return s0 + s1 + s2 + s3;
}
using StreamSum = uint64_t (*)(const uint64_t*, size_t);
constexpr StreamSum kPatterns[] = {&stream_sum<1, true>, &stream_sum<4, false>};

}  // namespace

ReadProbe::ReadProbe(unsigned threads)
    : threads_(threads), a_((1024u << 20) / sizeof(uint64_t) + 8, 1) {}

double ReadProbe::measure(int passes) {
  // From a cache line's start: malloc's 16-byte offset would split every 64-byte load in two
  // (the probe then read ~12% slower than the decode kernels it is the reference for).
  const uint64_t* data = a_.data() + (64 - (uintptr_t)a_.data() % 64) % 64 / sizeof(uint64_t);
  const size_t n = a_.size() - 8;
  const size_t bytes = n / kStride * kStride * sizeof(uint64_t);  // what the threads read
  double best = 0;
  for (int rep = 0; rep < passes; ++rep)
    for (StreamSum sum : kPatterns) {
      std::vector<uint64_t> sums(threads_);
      const int64_t t0 = now_ns();
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads_; ++t)
        pool.emplace_back([&, t] {
          const size_t b = n / kStride * t / threads_ * kStride;
          const size_t e = n / kStride * (t + 1) / threads_ * kStride;
          sums[t] = sum(data + b, e - b);
        });
      for (auto& th : pool) th.join();
      const double s = (now_ns() - t0) / 1e9;
      if (std::accumulate(sums.begin(), sums.end(), uint64_t{0}) == 0) return 0;  // keeps loads
      best = std::max(best, static_cast<double>(bytes) / s);
    }
  return best;
}

}  // namespace sy::bench
