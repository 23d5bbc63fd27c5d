// A synthetic (or replayed) serving workload: when each request arrives, its prompt token ids,
// how many tokens it asks for, and its class. Deterministic from the seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace sy::bench {

class Rng;

struct LengthDist {
  enum class Kind { fixed, uniform, normal, bimodal };
  Kind kind = Kind::fixed;
  uint32_t value = 16;         // fixed
  uint32_t min = 1, max = 16;  // uniform range; the clamp of normal
  double mean = 16, std = 0;   // normal: round(mean + std * z), clamped to [min, max]
  uint32_t short_min = 8, short_max = 16, long_min = 128, long_max = 256;  // bimodal: uniform
  double long_fraction = 0.25;                                             // in each mode

  uint32_t sample(Rng& rng) const;
  uint32_t upper() const;  // the largest value sample() can return
};

struct ClassSpec {
  LengthDist prompt, output;
};

struct WorkloadSpec {
  enum class Arrival { poisson, gamma, trace };
  uint64_t seed = 1;
  uint32_t requests = 32;
  double rate = 4.0;  // requests/s; infinity sends every request at t = 0
  Arrival arrival = Arrival::poisson;
  double burstiness = 1.0;  // gamma shape: 1 Poisson, < 1 burstier, > 1 smoother
  std::string trace_path;   // arrival = trace: CSV "arrival_s,prompt_len,output_len[,class]"
  double simple_ratio = 0.5;
  ClassSpec simple, complex;
  double shared_prefix_ratio = 0.0;  // fraction of requests whose prompt starts with the prefix
  uint32_t shared_prefix_len = 0;    // prepended to the sampled prompt length
};

struct WorkItem {
  int64_t arrival_ns = 0;  // offset from the start of the run
  std::vector<int32_t> prompt;
  uint32_t max_new_tokens = 1;
  bool simple = false;
  bool shared_prefix = false;
};

// Token ids are drawn from [kFirstToken, kEndToken): the byte range of the generated vocab,
// never a special token.
constexpr int32_t kFirstToken = 3, kEndToken = 259;

// Arrival offsets (seconds) as `vllm bench serve` draws them: gaps ~ Gamma(shape=b,
// scale=1/(rate*b)), accumulated, then rescaled so the last arrival lands at n/rate.
std::vector<double> arrival_times(uint32_t n, double rate, double burstiness, Rng& rng);

// Throws std::runtime_error naming the trace file and line on a malformed trace.
std::vector<WorkItem> generate_workload(const WorkloadSpec& spec);

// The same workload at another mean request rate (a sweep point or a capacity check): synthetic
// arrivals are redrawn at `rate` from the same seed, a trace is compressed or stretched in time.
WorkloadSpec at_rate(WorkloadSpec spec, double rate, uint32_t requests);

}  // namespace sy::bench
