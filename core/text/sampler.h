// Token sampling: greedy, or temperature with top-k, typical-p, top-p and min-p, from a
// per-request seeded RNG so that a request's tokens do not depend on what it was batched with.
// Before either, OpenAI's logit_bias, vLLM's repetition penalty and OpenAI's presence / frequency
// penalties adjust the logits; the sampled token's log-probability (and the most likely
// alternatives) can be reported from the adjusted logits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "text/token_grammar.h"

namespace sy::text {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy (argmax, lowest id wins ties)
  int32_t top_k = 0;         // 0: no limit
  float top_p = 1.0f;        // 1: no nucleus cut
  // After temperature: keep the tokens whose probability is at least min_p times the most
  // likely one's (vLLM, llama.cpp); 0: off.
  float min_p = 0.0f;
  // Locally typical sampling (llama.cpp's typical_p): the tokens whose surprise is closest to the
  // distribution's entropy, as many as hold typical_p of the mass; 1: off.
  float typical_p = 1.0f;
  // vLLM's: a token already in the prompt or the output has its logit divided by this when
  // positive, multiplied when not; 1: off.
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
  // Over the tokens this sampler produced: logit -= frequency * count + presence * (count > 0).
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to those tokens' logits
  int32_t logprobs = -1;  // >= 0: report each sampled token's logprob and this many alternatives
  // Output kept inside a grammar (GBNF, JSON schema, tool calls); null: free.
  std::shared_ptr<const TokenGrammar> grammar;
};

// log softmax at temperature 1 of the adjusted logits; -9999 stands for an impossible token.
struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  // the `logprobs` most likely, best first
};

// The log softmax of `logits` at `token`, with the `top` most likely tokens (best first, ties to
// the lower id).
TokenLogprob token_logprob(const float* logits, int32_t n_vocab, int32_t token, int32_t top);

// Not thread-safe; one per request. The non-greedy path takes one draw per sample(), and a second
// when a grammar refuses the first token: it is then drawn again from the masked distribution,
// which gives each allowed token exactly its masked probability while the common case (the
// model's choice fits) never computes a mask. Logprobs are the model's, before the mask.
class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  // Throws std::invalid_argument when n_vocab <= 0. NaN logits count as -inf. `lp`, when given
  // (and params().logprobs >= 0), receives the sampled token's log-probability.
  int32_t sample(const float* logits, int32_t n_vocab, TokenLogprob* lp = nullptr);
  const SamplingParams& params() const { return params_; }
  // The prompt, for the repetition penalty (a no-op without one).
  void prompt(const std::vector<int32_t>& tokens);
  // The grammar's output is complete and nothing may follow (never without a grammar).
  bool finished() const { return grammar_ && grammar_->finished(); }

 private:
  int32_t pick(const float* logits, int32_t n_vocab);
  // Temperature alone: a draw over every token's weight; -1 when no logit is finite or one is
  // infinite (pick's general path shares the mass then).
  int32_t draw_uncut(const float* logits, int32_t n_vocab);
  double next_uniform();  // [0, 1), xoshiro256** seeded with splitmix64(seed)
  struct Candidate {
    float logit;
    int32_t id;
    double weight;  // exp((logit - max) / temperature)
  };
  SamplingParams params_;
  uint64_t state_[4];
  std::vector<Candidate> scratch_;  // reused across calls
  std::vector<float> adjusted_;     // logits after bias and penalties
  std::vector<float> weights_;      // per token, when nothing is cut
  std::vector<double> blocks_;      // their sums per block of tokens
  std::unordered_map<int32_t, uint32_t> counts_;  // tokens produced, for the penalties
  std::unordered_set<int32_t> seen_;  // prompt and output tokens, for the repetition penalty
  std::optional<GrammarState> grammar_;
  std::vector<float> masked_;
  uint32_t mask_first_ = 0;  // draws left that apply the grammar's mask before picking
};

}  // namespace sy::text
