#include "server/shadow.h"

#include <algorithm>

namespace sy::server {

ShadowResult compare_outputs(const Outcome& p, const Outcome& s) {
  ShadowResult r;
  const size_t n = std::max(p.tokens.size(), s.tokens.size());
  const size_t common = std::min(p.tokens.size(), s.tokens.size());
  r.compared = static_cast<uint32_t>(n);
  for (size_t i = 0; i < common; ++i) {
    if (p.tokens[i] == s.tokens[i])
      ++r.agreed;
    else if (r.first_divergence < 0)
      r.first_divergence = static_cast<int64_t>(i);
  }
  if (r.first_divergence < 0 && p.tokens.size() != s.tokens.size())
    r.first_divergence = static_cast<int64_t>(common);
  r.exact = r.first_divergence < 0;
  r.light_vs_full = p.path == 1 && s.path == 0;
  r.misroute = r.light_vs_full && !r.exact;
  r.latency_diff_s = ((s.finish_ns - s.arrival_ns) - (p.finish_ns - p.arrival_ns)) / 1e9;
  return r;
}

void ShadowPair::done(const Outcome& o, bool primary) {
  std::optional<Outcome> p, s;
  {
    std::lock_guard<std::mutex> lk(mu_);
    (primary ? primary_ : shadow_) = o;
    if (!primary_ || !shadow_) return;
    p = std::move(primary_);
    s = std::move(shadow_);
  }
  if (p->reason == engine::FinishReason::aborted) return skip_("primary_aborted");
  if (s->reason == engine::FinishReason::aborted) return skip_("shadow_aborted");
  report_(compare_outputs(*p, *s));
}

double unit_hash(const std::string& id, uint64_t salt) {
  // FNV-1a, then a splitmix64 finaliser so nearby ids spread over [0, 1).
  uint64_t h = 1469598103934665603ull ^ salt;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return (h >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace sy::server
