// The streaming-read bandwidth that the decode benchmarks (bench-backend, bench-hybrid) take as
// the reference of a memory-bound decode.
#pragma once

#include <cstdint>
#include <vector>

namespace sy::bench {

// `threads` threads each sum their share of a buffer far larger than the caches (the backend's
// thread count: what its decode could stream at most), in each of two read patterns
// (read_probe.cpp). The buffer is touched once; each measure() is the best of `passes` passes
// over it, so that it can be taken next to every timed run (a shared machine's bandwidth drifts
// from one minute to the next).
class ReadProbe {
 public:
  explicit ReadProbe(unsigned threads);
  double measure(int passes);  // bytes per second

 private:
  unsigned threads_;
  std::vector<uint64_t> a_;
};

}  // namespace sy::bench
