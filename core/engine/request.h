// One generation request and its life in the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/kv_cache.h"
#include "text/sampler.h"

namespace sy::engine {

struct RequestSpec {
  std::vector<int32_t> prompt;
  uint32_t max_new_tokens = 16;  // 0: compute the prompt only (echo with logprobs)
  text::SamplingParams sampling;
  int32_t priority = 0;
  bool stop_at_eos = true;
  uint32_t path = 0;           // triage tag (0 = full)
  bool simple_hint = false;    // client's hint that the request is simple (triage router input)
  uint32_t n_expert_used = 0;  // MoE experts per token on its path (0: the model's default)
  // Each prompt token's logprob given the ones before it (OpenAI's echo with logprobs): every
  // prompt position's logits are computed, so the request takes no prefix-cache hit.
  bool prompt_logprobs = false;
};

enum class FinishReason { none, stop, length, context, aborted };
const char* finish_reason_name(FinishReason r);

struct Request {
  uint64_t id = 0;
  RequestSpec spec;
  int64_t arrival_ns = 0;
  // Progress
  std::vector<int32_t> output;
  uint32_t num_computed = 0;  // tokens of prompt+output whose keys are cached
  // The step now computing (overlapped engines plan the next one meanwhile): tokens it computes
  // for this request, and 1 when it samples the request's next token.
  uint32_t inflight_tokens = 0;
  uint32_t inflight_outputs = 0;
  std::vector<int32_t> blocks;
  std::vector<int32_t> window_blocks;  // the sliding-window layers' own pool (KvCache::windowed)
  int32_t state_slot = -1;  // recurrent state, held while running
  int32_t restore_slot = -1;  // hybrid prefix hit: the pinned snapshot its first pass restores
  // Prefix caching: hash chain over the full blocks of prompt + output, how many of this
  // request's blocks are published, and the cached prefix the scheduler was shown (in blocks).
  std::vector<model::BlockHash> hashes;
  uint32_t published_blocks = 0;
  uint32_t view_hit_blocks = 0;
  uint32_t prefix_hit_tokens = 0;  // cached prompt tokens it was admitted with (last admission)
  bool running = false;
  uint32_t num_preemptions = 0;
  FinishReason finish = FinishReason::none;
  // Timing on the host clock
  int64_t first_scheduled_ns = 0;
  std::vector<int64_t> token_ns;  // when each output token was produced
  std::vector<text::TokenLogprob> logprobs;  // per output token, if spec.sampling.logprobs >= 0
  // spec.prompt_logprobs: one per prompt token; the first (nothing before it) stays empty.
  std::vector<text::TokenLogprob> prompt_logprobs;
  int64_t finish_ns = 0;
  text::Sampler sampler{text::SamplingParams{}};

  uint32_t known_tokens() const {
    return static_cast<uint32_t>(spec.prompt.size() + output.size());
  }
  // The same counts as they will be once the step now computing commits: what planning sees.
  uint32_t planned_computed() const { return num_computed + inflight_tokens; }
  uint32_t planned_known() const { return known_tokens() + inflight_outputs; }
  int32_t token_at(uint32_t i) const {
    return i < spec.prompt.size() ? spec.prompt[i] : output[i - spec.prompt.size()];
  }
};

}  // namespace sy::engine
