// Token sampling: greedy, or temperature with top-k and top-p, from a per-request seeded RNG so
// that a request's tokens do not depend on what it was batched with.
#pragma once

#include <cstdint>
#include <vector>

namespace sy::text {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy (argmax, lowest id wins ties)
  int32_t top_k = 0;         // 0: no limit
  float top_p = 1.0f;        // 1: no nucleus cut
  uint64_t seed = 0;
};

// Not thread-safe; one per request. The non-greedy path takes exactly one draw per sample().
class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  // Throws std::invalid_argument when n_vocab <= 0. NaN logits count as -inf.
  int32_t sample(const float* logits, int32_t n_vocab);
  const SamplingParams& params() const { return params_; }

 private:
  double next_uniform();  // [0, 1), xoshiro256** seeded with splitmix64(seed)
  struct Candidate {
    float logit;
    int32_t id;
    double weight;  // exp((logit - max) / temperature)
  };
  SamplingParams params_;
  uint64_t state_[4];
  std::vector<Candidate> scratch_;  // reused across calls
};

}  // namespace sy::text
