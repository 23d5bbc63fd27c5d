// Sampler: greedy, or temperature + top-k + typical-p + top-p + min-p. The RNG and the draw are
// our own code so a seed gives the same tokens with any standard library.
#include "text/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "switchyard/common/error.h"

namespace sy::text {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// NaN ranks below everything, so it is never picked while a number is there.
float clean(float x) {
  return std::isnan(x) ? kNegInf : x;
}

// e^x for x <= 0, to a few 1e-6 relative (1e-7 near 0, where the mass is), and 0 below -87
// (e^-87 is near the smallest normal float) and at -inf. Branch-free arithmetic, so that a loop
// over a vocabulary vectorizes (this file is built with -O3 -fno-trapping-math for it) where
// std::exp is a call per token.
float exp_nonpositive(float x) {
  const float t = std::max(x, -87.0f) * 1.44269504088896341f;  // x / ln 2, in [-125.6, 0]
  const float r = t + 12582912.0f;  // 1.5 * 2^23: t rounded to an integer, in the low bits
  const int32_t j = std::bit_cast<int32_t>(r) - 0x4B400000;
  const float y = (t - (r - 12582912.0f)) * 0.693147180559945309f;  // in [-ln 2 / 2, ln 2 / 2]
  // e^y by its Taylor series to y^8 / 8! (the next term is below 1e-8 here), Horner's way.
  float p = 1.0f / 40320.0f;
  p = p * y + 1.0f / 5040.0f;
  p = p * y + 1.0f / 720.0f;
  p = p * y + 1.0f / 120.0f;
  p = p * y + 1.0f / 24.0f;
  p = p * y + 1.0f / 6.0f;
  p = p * y + 0.5f;
  p = p * y + 1.0f;
  p = p * y + 1.0f;
  const float scale = std::bit_cast<float>((j + 127) << 23);  // 2^j
  return x < -87.0f ? 0.0f : p * scale;
}

// The largest logit, NaN left out (-inf when there is none). GCC vectorizes no float maximum
// that must keep NaN's meaning, so SSE2 does it by hand: maxps gives its second operand when
// the first is NaN.
float max_logit(const float* x, int32_t n) {
  int32_t i = 0;
  float m = kNegInf;
#if defined(__SSE2__)
  __m128 a = _mm_set1_ps(kNegInf), b = a;
  for (; i + 8 <= n; i += 8) {
    a = _mm_max_ps(_mm_loadu_ps(x + i), a);
    b = _mm_max_ps(_mm_loadu_ps(x + i + 4), b);
  }
  alignas(16) float lane[4];
  _mm_store_ps(lane, _mm_max_ps(a, b));
  for (const float v : lane) m = v > m ? v : m;
#endif
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// A sum of weights in eight lanes: the same order, so the same sum, every run.
double lane_sum(const float* w, int32_t n) {
  float lane[8] = {};
  int32_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) lane[k] += w[i + k];
  double s = 0;
  for (; i < n; ++i) s += w[i];
  for (const float v : lane) s += v;
  return s;
}

constexpr int32_t kBlock = 64;  // weights summed per block, so that a draw skips whole blocks

}  // namespace

TokenLogprob token_logprob(const float* x, int32_t n, int32_t token, int32_t top) {
  const float max = max_logit(x, n);
  double sum = 0;
  if (!std::isinf(max))
    for (int32_t i = 0; i < n; ++i) sum += std::exp(double(clean(x[i])) - double(max));
  const double log_z = std::isinf(max) ? 0.0 : double(max) + std::log(sum);
  auto lp = [&](int32_t i) {
    const double v = double(clean(x[i])) - log_z;
    return std::isfinite(v) ? float(std::max(v, -9999.0)) : -9999.0f;
  };
  TokenLogprob out;
  out.token = token;
  out.logprob = lp(token);
  const int32_t k = std::min(top, n);
  if (k <= 0) return out;
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) order[size_t(i)] = i;
  auto better = [&](int32_t a, int32_t b) {
    return clean(x[a]) > clean(x[b]) || (clean(x[a]) == clean(x[b]) && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
  for (int32_t i = 0; i < k; ++i) out.top.emplace_back(order[size_t(i)], lp(order[size_t(i)]));
  return out;
}

Sampler::Sampler(const SamplingParams& params) : params_(params) {
  if (params.grammar) grammar_.emplace(params.grammar);
  uint64_t x = params.seed;
  for (auto& s : state_) s = splitmix64(x);
}

double Sampler::next_uniform() {  // xoshiro256**
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return double(result >> 11) * 0x1.0p-53;
}

void Sampler::prompt(const std::vector<int32_t>& tokens) {
  if (params_.repetition_penalty != 1.0f) seen_.insert(tokens.begin(), tokens.end());
}

int32_t Sampler::sample(const float* logits, int32_t n_vocab, TokenLogprob* lp) {
  if (n_vocab <= 0) throw sy::Error("Sampler::sample: n_vocab must be positive");
  const bool penalties = params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
  const bool repetition = params_.repetition_penalty != 1.0f;
  const float* x = logits;
  if (!params_.logit_bias.empty() || (penalties && !counts_.empty()) ||
      (repetition && !seen_.empty())) {
    adjusted_.assign(logits, logits + n_vocab);
    for (const auto& [id, bias] : params_.logit_bias)
      if (id >= 0 && id < n_vocab) adjusted_[id] += bias;
    if (repetition)
      for (int32_t id : seen_)
        if (id >= 0 && id < n_vocab) {
          float& v = adjusted_[id];
          v = v > 0 ? v / params_.repetition_penalty : v * params_.repetition_penalty;
        }
    for (const auto& [id, count] : counts_)
      if (id < n_vocab)
        adjusted_[id] -= params_.frequency_penalty * float(count) + params_.presence_penalty;
    x = adjusted_.data();
  }
  // With a grammar, the model's own pick is tried first: when the grammar allows it, it is the
  // draw the mask would give (greedy: the same argmax; sampled: accepted tokens follow the
  // masked distribution), at the cost of no mask. A model that strayed has the mask applied
  // first for the next kMaskFirst draws instead of paying for both.
  constexpr uint32_t kMaskFirst = 8;
  int32_t token = -1;
  if (!grammar_ || mask_first_ == 0) token = pick(x, n_vocab);
  if (grammar_ && (token < 0 || !grammar_->allows(token))) {
    if (token >= 0)
      mask_first_ = kMaskFirst;
    else
      --mask_first_;
    masked_.assign(x, x + n_vocab);
    grammar_->mask(masked_.data(), n_vocab);
    token = pick(masked_.data(), n_vocab);
  }
  if (grammar_) grammar_->accept(token);
  if (lp && params_.logprobs >= 0) *lp = token_logprob(x, n_vocab, token, params_.logprobs);
  if (penalties) ++counts_[token];
  if (repetition) seen_.insert(token);
  return token;
}

int32_t Sampler::pick(const float* logits, int32_t n_vocab) {
  if (!(params_.temperature > 0.0f)) {  // greedy (also for a NaN temperature)
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab; ++i)
      if (clean(logits[i]) > clean(logits[best])) best = i;
    return best;
  }

  // No cut (temperature only): every token weighed, in id order.
  if (params_.top_k <= 0 && params_.top_p >= 1.0f && params_.min_p <= 0.0f &&
      params_.typical_p >= 1.0f)
    if (const int32_t token = draw_uncut(logits, n_vocab); token >= 0) return token;

  // Higher logit first, ties to the lower id: the order top-k and top-p cut in.
  auto before = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  // Tokens at -inf (a grammar's mask, a -100 bias) have no mass: left out, so that a masked
  // vocabulary costs what it allows. Only when every logit is -inf do they all stay.
  auto& c = scratch_;
  c.clear();
  c.reserve(size_t(n_vocab));
  for (int32_t i = 0; i < n_vocab; ++i)
    if (const float l = clean(logits[i]); l != kNegInf) c.push_back({l, i, 0.0});
  if (c.empty())
    for (int32_t i = 0; i < n_vocab; ++i) c.push_back({kNegInf, i, 0.0});

  int32_t n = int32_t(c.size());
  bool sorted = false;
  if (params_.top_k > 0 && params_.top_k < n_vocab) {
    n = std::min(params_.top_k, n);
    std::nth_element(c.begin(), c.begin() + (n - 1), c.end(), before);
    std::sort(c.begin(), c.begin() + n, before);
    sorted = true;
  }

  float max = kNegInf;
  for (int32_t i = 0; i < n; ++i) max = std::max(max, c[i].logit);
  const double inv_t = 1.0 / double(params_.temperature);
  double total = 0;
  for (int32_t i = 0; i < n; ++i) {
    // An infinite maximum (all -inf, or some +inf) shares the mass among the logits equal to it.
    c[i].weight = std::isinf(max) ? double(c[i].logit == max)
                                  : exp_nonpositive(float((double(c[i].logit) - max) * inv_t));
    total += c[i].weight;
  }

  if (params_.typical_p < 1.0f && n > 1) {
    // The candidates closest to the entropy in surprise, until they hold typical_p of the mass;
    // then back in logit order, so top-p and the draw see them as before.
    double entropy = 0;
    for (int32_t i = 0; i < n; ++i)
      if (c[i].weight > 0) entropy -= c[i].weight / total * std::log(c[i].weight / total);
    auto distance = [&](const Candidate& a) {
      return a.weight > 0 ? std::fabs(-std::log(a.weight / total) - entropy)
                          : std::numeric_limits<double>::infinity();
    };
    std::sort(c.begin(), c.begin() + n, [&](const Candidate& a, const Candidate& b) {
      const double da = distance(a), db = distance(b);
      return da < db || (da == db && before(a, b));
    });
    const double target = double(std::max(params_.typical_p, 0.0f)) * total;
    double cum = 0;
    int32_t keep = 0;
    while (keep < n && (keep == 0 || cum < target)) cum += c[keep++].weight;
    n = keep;
    std::sort(c.begin(), c.begin() + n, before);
    sorted = true;
    total = cum;
  }

  if (params_.top_p < 1.0f) {
    // The smallest sorted prefix holding top_p of the mass. Without top-k only the prefix gets
    // sorted, grown geometrically, so a peaked distribution costs O(n_vocab).
    const double target = double(std::max(params_.top_p, 0.0f)) * total;
    double cum = 0;
    int32_t done = 0, keep = n;
    for (int32_t m = sorted ? n : std::min(n, 64);; m = int32_t(std::min<int64_t>(n, 4LL * m))) {
      if (!sorted) {
        if (m < n) std::nth_element(c.begin() + done, c.begin() + (m - 1), c.begin() + n, before);
        std::sort(c.begin() + done, c.begin() + m, before);
      }
      for (; done < m; ++done) {
        cum += c[done].weight;
        if (cum >= target) break;
      }
      if (done < m) {
        keep = done + 1;
        break;
      }
      if (m == n) break;  // rounding kept everyone
    }
    n = keep;
    total = 0;
    for (int32_t i = 0; i < n; ++i) total += c[i].weight;
  }

  if (params_.min_p > 0.0f) {
    // Relative to the most likely candidate left; the order of the rest is kept.
    double top = 0;
    for (int32_t i = 0; i < n; ++i) top = std::max(top, c[i].weight);
    const double floor = double(params_.min_p) * top;
    int32_t kept = 0;
    total = 0;
    for (int32_t i = 0; i < n; ++i)
      if (c[i].weight >= floor) {
        c[kept++] = c[i];
        total += c[i].weight;
      }
    n = kept;
  }

  // Candidates are walked in the order they stand: sorted when cut, else by id.
  const double r = next_uniform() * total;
  double cum = 0;
  for (int32_t i = 0; i < n; ++i) {
    cum += c[i].weight;
    if (r < cum) return c[i].id;
  }
  return c[n - 1].id;  // rounding left r at the very top
}

int32_t Sampler::draw_uncut(const float* logits, int32_t n_vocab) {
  const float max = max_logit(logits, n_vocab);
  if (std::isinf(max)) return -1;  // no finite logit, or an infinite one: the general path
  const float inv_t = 1.0f / params_.temperature;
  weights_.resize(size_t(n_vocab));
  float* w = weights_.data();
  for (int32_t i = 0; i < n_vocab; ++i) w[i] = exp_nonpositive((clean(logits[i]) - max) * inv_t);
  const int32_t n_blocks = (n_vocab + kBlock - 1) / kBlock;
  blocks_.resize(size_t(n_blocks));
  double total = 0;
  for (int32_t b = 0; b < n_blocks; ++b)
    total += blocks_[size_t(b)] = lane_sum(w + b * kBlock, std::min(kBlock, n_vocab - b * kBlock));
  // The token where the running sum passes r: whole blocks skipped, then token by token.
  const double r = next_uniform() * total;
  double cum = 0;
  for (int32_t b = 0; b < n_blocks; ++b) {
    const double block = blocks_[size_t(b)];
    if (block == 0 || r >= cum + block) {
      cum += block;
      continue;
    }
    for (int32_t j = b * kBlock, end = std::min(n_vocab, j + kBlock); j < end; ++j) {
      cum += w[j];
      if (w[j] > 0 && r < cum) return j;
    }
  }
  for (int32_t j = n_vocab - 1; j > 0; --j)  // rounding left r at the very top
    if (w[j] > 0) return j;
  return 0;
}

}  // namespace sy::text
