// A rule-based triage router. A request is light when its prompt has at most max_prompt_tokens
// tokens and it asks for at most max_new_tokens, and the hint rule agrees:
//   hint = "require"  only requests the client hinted as simple may be light (default)
//   hint = "trust"    a hinted request is light whatever its lengths
//   hint = "ignore"   the length rules alone decide
// Reason codes (sy_route_decision.reason): see enum Reason.
#include <cstdint>

#include "switchyard/sdk/router.h"

namespace {

enum class Hint { require, trust, ignore };

enum Reason : uint32_t {
  kLightByLength = 1,     // within both length limits (and hinted, under "require")
  kLightByHint = 2,       // "trust": hinted, over a length limit
  kPromptTooLong = 3,     // full: prompt_len > max_prompt_tokens
  kTooManyNewTokens = 4,  // full: max_new_tokens over the limit
  kNotHinted = 5,         // full: "require" and no hint
};

class TriageRules {
 public:
  static constexpr sy::plugin::Info kInfo{
      "triage_rules", "0.1.0", "rule-based triage: prompt and output length limits, client hint"};
  struct Options {
    uint64_t max_prompt_tokens = 64;
    uint64_t max_new_tokens = 32;
    Hint hint = Hint::require;
  };
  static void declare(sy::plugin::Params<Options>& p) {
    p.add("max_prompt_tokens", &Options::max_prompt_tokens, 0, 1u << 24);
    p.add("max_new_tokens", &Options::max_new_tokens, 0, 1u << 24);
    p.choice("hint", &Options::hint,
             {{"require", Hint::require}, {"trust", Hint::trust}, {"ignore", Hint::ignore}});
  }
  explicit TriageRules(const Options& o) : o_(o) {}

  void route(const sy_route_request& q, sy_route_decision& d) const {
    const bool hinted = q.simple_hint != 0;
    uint32_t reason = kLightByLength;
    if (q.prompt_len > o_.max_prompt_tokens)
      reason = kPromptTooLong;
    else if (q.max_new_tokens > o_.max_new_tokens)
      reason = kTooManyNewTokens;
    else if (o_.hint == Hint::require && !hinted)
      reason = kNotHinted;
    if (reason != kLightByLength && o_.hint == Hint::trust && hinted) reason = kLightByHint;
    const bool light = reason == kLightByLength || reason == kLightByHint;
    d.path = light ? SY_PATH_LIGHT : SY_PATH_FULL;
    d.reason = reason;
  }

 private:
  Options o_;
};

}  // namespace

SY_DEFINE_ROUTER_PLUGIN(TriageRules)
