// Sampler: greedy and top-k=1 pick the argmax, seeds reproduce, frequencies follow the softmax,
// top-p never leaves the nucleus, min-p, typical-p and the repetition penalty cut and weigh as
// their formulas say.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include "grammar/gbnf.h"
#include "switchyard/common/error.h"
#include "text/sampler.h"

namespace sy::text {
namespace {

SamplingParams params(float temperature, int32_t top_k = 0, float top_p = 1.0f,
                      uint64_t seed = 1234) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  std::vector<double> p(logits.size());
  const double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp((logits[i] - mx) / temperature);
  for (auto& x : p) x /= sum;
  return p;
}

std::vector<double> frequencies(Sampler& s, const std::vector<float>& logits, int draws) {
  std::vector<double> f(logits.size());
  for (int i = 0; i < draws; ++i) {
    const int32_t t = s.sample(logits.data(), int32_t(logits.size()));
    EXPECT_GE(t, 0);
    EXPECT_LT(t, int32_t(logits.size()));
    f[t] += 1.0 / draws;
  }
  return f;
}

// Deterministic pseudo-random logits (a small LCG, independent of the sampler's RNG).
std::vector<float> make_logits(int n, uint32_t seed) {
  std::vector<float> l(n);
  for (auto& x : l) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1 << 24) * 8.0f - 4.0f;
  }
  return l;
}

TEST(Sampler, GreedyIsArgmaxLowestIdOnTies) {
  Sampler s(params(0.0f));
  const std::vector<float> l = {1.0f, 3.0f, -2.0f, 3.0f, 2.5f};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.sample(l.data(), 5), 1);
  const std::vector<float> one = {-7.0f};
  EXPECT_EQ(s.sample(one.data(), 1), 0);
  const std::vector<float> with_nan = {NAN, -1.0f, NAN, 0.5f};
  EXPECT_EQ(s.sample(with_nan.data(), 4), 3);
  for (int n = 10; n < 200; n += 37) {
    const auto r = make_logits(n, n);
    const auto best = int32_t(std::max_element(r.begin(), r.end()) - r.begin());
    EXPECT_EQ(s.sample(r.data(), n), best);
  }
  EXPECT_THROW(s.sample(l.data(), 0), sy::Error);
}

TEST(Sampler, TopK1IsGreedyAtAnyTemperature) {
  const std::vector<float> ties = {0.0f, 2.0f, 2.0f, 1.0f};
  for (float t : {0.1f, 0.7f, 1.0f, 5.0f, 100.0f}) {
    Sampler s(params(t, 1, 1.0f, 99));
    for (int i = 0; i < 50; ++i) {
      const auto r = make_logits(300, 7 * i + 1);
      const auto best = int32_t(std::max_element(r.begin(), r.end()) - r.begin());
      ASSERT_EQ(s.sample(r.data(), 300), best) << "temperature " << t;
    }
    EXPECT_EQ(s.sample(ties.data(), 4), 1);
    // top_p on top of top_k = 1 changes nothing.
    Sampler sp(params(t, 1, 0.3f, 99));
    EXPECT_EQ(sp.sample(ties.data(), 4), 1);
  }
}

TEST(Sampler, SeedReproducesAndSeedsDiffer) {
  auto run = [](uint64_t seed, const SamplingParams& base) {
    SamplingParams p = base;
    p.seed = seed;
    Sampler s(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 300; ++i) {
      const auto l = make_logits(500, i + 1);
      out.push_back(s.sample(l.data(), 500));
    }
    return out;
  };
  for (const SamplingParams& p :
       {params(1.0f), params(0.8f, 40), params(1.2f, 0, 0.9f), params(0.9f, 100, 0.95f)}) {
    const auto a = run(42, p), b = run(42, p), c = run(43, p);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_GT(std::set<int32_t>(a.begin(), a.end()).size(), 20u);  // actually random
  }
  EXPECT_EQ(Sampler(params(1.0f, 0, 1.0f, 5)).params().seed, 5u);
}

TEST(Sampler, FrequenciesMatchSoftmax) {
  const std::vector<float> l = {0.0f, 1.0f, 2.0f, 0.5f, -1.0f};
  for (float t : {1.0f, 0.5f, 2.0f}) {
    Sampler s(params(t, 0, 1.0f, 7));
    const auto f = frequencies(s, l, 20000);
    const auto p = softmax(l, t);
    for (size_t i = 0; i < l.size(); ++i)
      EXPECT_NEAR(f[i], p[i], 0.02) << "token " << i << " temperature " << t;
  }
}

// Over a vocabulary of a real model's size where a mask leaves three tokens (every other logit
// -inf or NaN), with and without cuts: only those three are drawn, as the softmax of their logits
// says, also at a temperature that puts logits 80 apart (weights near the smallest float).
TEST(Sampler, MaskedLargeVocabularyDrawsOnlyWhatIsLeft) {
  constexpr int32_t kVocab = 128256;
  const int32_t kept[3] = {17, 70000, kVocab - 1};
  std::vector<float> l(kVocab, -std::numeric_limits<float>::infinity());
  const std::vector<float> left = {1.0f, 2.0f, 0.25f};
  for (int i = 0; i < 3; ++i) l[size_t(kept[i])] = left[size_t(i)];
  l[3] = l[69999] = l[kVocab - 2] = NAN;  // no mass either
  for (int32_t top_k : {0, 40}) {
    for (float top_p : {1.0f, 0.999f}) {
      Sampler s(params(1.0f, top_k, top_p, 5));
      const auto f = frequencies(s, l, 2000);
      const auto p = softmax(left, 1.0);
      for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(f[size_t(kept[i])], p[size_t(i)], 0.04) << top_k << " " << top_p;
      EXPECT_NEAR(f[size_t(kept[0])] + f[size_t(kept[1])] + f[size_t(kept[2])], 1.0, 1e-6);
    }
  }
  std::vector<float> far = {0.0f, -80.0f, -100.0f};  // e^-80, and a weight below any float
  Sampler s(params(1.0f, 0, 1.0f, 9));
  for (int i = 0; i < 2000; ++i) EXPECT_EQ(s.sample(far.data(), 3), 0);
}

TEST(Sampler, TopKRenormalises) {
  const std::vector<float> l = {0.0f, 1.0f, 2.0f, 0.5f, -1.0f};
  Sampler s(params(1.0f, 2, 1.0f, 11));
  const auto f = frequencies(s, l, 20000);
  // Tokens 2 and 1 remain, in the ratio e^2 : e^1.
  const double p2 = std::exp(2.0) / (std::exp(2.0) + std::exp(1.0));
  EXPECT_NEAR(f[2], p2, 0.02);
  EXPECT_NEAR(f[1], 1 - p2, 0.02);
  EXPECT_EQ(f[0] + f[3] + f[4], 0.0);
}

TEST(Sampler, TopPExcludesTail) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 (shuffled ids): the 0.75 nucleus is {0.5, 0.3}.
  const std::vector<float> l = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  Sampler s(params(1.0f, 0, 0.75f, 3));
  const auto f = frequencies(s, l, 20000);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.8, 0.02);
  EXPECT_NEAR(f[3], 0.3 / 0.8, 0.02);

  // Equal probabilities: the cut keeps the lower ids.
  const std::vector<float> flat(4, 0.0f);
  Sampler sf(params(1.0f, 0, 0.5f, 3));
  const auto ff = frequencies(sf, flat, 4000);
  EXPECT_EQ(ff[2] + ff[3], 0.0);
  EXPECT_NEAR(ff[0], 0.5, 0.04);

  // top_p = 0 keeps only the best token.
  Sampler s0(params(1.0f, 0, 0.0f, 3));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(s0.sample(l.data(), 4), 1);
}

TEST(Sampler, TopPOnLargeVocab) {
  // A slowly decaying distribution over 2000 tokens so the nucleus (hundreds of tokens) is
  // larger than the sampler's first partial sort.
  const int n = 2000;
  std::vector<float> l(n);
  for (int i = 0; i < n; ++i) l[(i * 7919) % n] = -0.004f * i;  // ids scrambled
  const float top_p = 0.6f;
  const auto p = softmax(l, 1.0);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  std::set<int32_t> nucleus;
  double cum = 0;
  for (int id : order) {
    nucleus.insert(id);
    cum += p[id];
    if (cum >= top_p) break;
  }
  ASSERT_GT(nucleus.size(), 200u);
  ASSERT_LT(nucleus.size(), size_t(n));
  Sampler s(params(1.0f, 0, top_p, 17));
  const auto f = frequencies(s, l, 20000);
  double inside = 0;
  for (int i = 0; i < n; ++i) {
    if (nucleus.count(i))
      inside += f[i];
    else
      ASSERT_EQ(f[i], 0.0) << "token " << i << " is outside the nucleus";
  }
  EXPECT_NEAR(inside, 1.0, 1e-9);
  // Within the nucleus the mass is renormalised: the best token gets p / cum.
  EXPECT_NEAR(f[order[0]], p[order[0]] / cum, 0.01);

  // The same cut through top_k (sorted everything) gives the same nucleus.
  Sampler sk(params(1.0f, n - 1, top_p, 17));
  const auto fk = frequencies(sk, l, 2000);
  for (int i = 0; i < n; ++i) {
    if (!nucleus.count(i)) {
      ASSERT_EQ(fk[i], 0.0) << "token " << i;
    }
  }
}

}  // namespace

// ---- OpenAI's logit_bias, presence / frequency penalties and logprobs ----

TEST(Sampler, LogitBiasMovesTheArgmaxAndBansTokens) {
  SamplingParams p = params(0.0f);
  const std::vector<float> l = {1.0f, 3.0f, -2.0f, 2.5f};
  p.logit_bias = {{1, -100.0f}, {2, 4.1f}};
  Sampler s(p);
  EXPECT_EQ(s.sample(l.data(), 4), 3);  // token 1 banned; 2.1 (token 2) loses to 2.5
  p.logit_bias = {{1, -100.0f}, {2, 4.6f}};
  Sampler t(p);
  EXPECT_EQ(t.sample(l.data(), 4), 2);  // 2.6 beats 2.5
  p.temperature = 1.0f;
  p.logit_bias = {{1, -100.0f}, {9, 5.0f}};  // an id past the vocab is ignored
  Sampler u(p);
  for (int i = 0; i < 200; ++i) EXPECT_NE(u.sample(l.data(), 4), 1);
}

// logit[t] -= frequency * count(t) + presence * (count(t) > 0), over the tokens sampled so far.
TEST(Sampler, PenaltiesFollowOpenAisFormula) {
  SamplingParams p = params(0.0f);
  p.frequency_penalty = 0.6f;
  p.presence_penalty = 0.5f;
  Sampler s(p);
  const std::vector<float> l = {3.0f, 2.0f, 1.0f};
  std::vector<int32_t> got, want;
  std::vector<int> count(3, 0);
  for (int step = 0; step < 12; ++step) {
    got.push_back(s.sample(l.data(), 3));
    int best = 0;
    double best_v = -1e9;
    for (int i = 0; i < 3; ++i) {
      const double v = l[i] - 0.6 * count[i] - (count[i] > 0 ? 0.5 : 0.0);
      if (v > best_v) best_v = v, best = i;
    }
    want.push_back(best);
    ++count[best];
  }
  EXPECT_EQ(got, want);
  EXPECT_GT(std::set<int32_t>(got.begin(), got.end()).size(), 1u);  // the penalty did act
}

TEST(Sampler, MinPKeepsTokensNearTheBest) {
  // Probabilities 0.5, 0.3, 0.15, 0.05: min_p 0.25 keeps those >= 0.125, renormalised.
  const std::vector<float> l = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  SamplingParams p = params(1.0f, 0, 1.0f, 5);
  p.min_p = 0.25f;
  Sampler s(p);
  const auto f = frequencies(s, l, 20000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.95, 0.02);
  EXPECT_NEAR(f[3], 0.3 / 0.95, 0.02);
  EXPECT_NEAR(f[0], 0.15 / 0.95, 0.02);
  // After temperature, as vLLM applies it: at t = 2 the 0.05 token is within a quarter of the
  // best (sqrt(0.05 / 0.5) = 0.32 > 0.25).
  p.temperature = 2.0f;
  Sampler hot(p);
  EXPECT_GT(frequencies(hot, l, 20000)[2], 0.0);
}

TEST(Sampler, TypicalPKeepsTheTokensNearestTheEntropy) {
  // Probabilities 0.5, 0.3, 0.15, 0.05: entropy H = 1.14 nats; surprises 0.69, 1.20, 1.90, 3.00;
  // distances to H 0.45, 0.06, 0.76, 1.86. By distance: 0.3, then 0.5 (cum 0.8 >= 0.7).
  const std::vector<float> l = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  SamplingParams p = params(1.0f, 0, 1.0f, 9);
  p.typical_p = 0.7f;
  Sampler s(p);
  const auto f = frequencies(s, l, 20000);
  EXPECT_EQ(f[0] + f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.8, 0.02);
  EXPECT_NEAR(f[3], 0.3 / 0.8, 0.02);
  // A mass below the nearest token's own keeps that token alone: 0.3, not the argmax.
  p.typical_p = 0.1f;
  Sampler one(p);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(one.sample(l.data(), 4), 3);
}

TEST(Sampler, RepetitionPenaltyFollowsVllm) {
  // Greedy: a token in the prompt or the output has a positive logit divided, a negative one
  // multiplied.
  SamplingParams p = params(0.0f);
  p.repetition_penalty = 2.0f;
  Sampler s(p);
  s.prompt({0});
  const std::vector<float> l = {3.0f, 2.0f, -1.0f, -1.5f};
  std::vector<int32_t> got, want;
  std::set<int> seen = {0};
  for (int step = 0; step < 6; ++step) {
    got.push_back(s.sample(l.data(), 4));
    int best = 0;
    double best_v = -1e9;
    for (int i = 0; i < 4; ++i) {
      const double v = seen.count(i) ? (l[i] > 0 ? l[i] / 2.0 : l[i] * 2.0) : l[i];
      if (v > best_v) best_v = v, best = i;
    }
    want.push_back(best);
    seen.insert(best);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.front(), 1);  // the prompt's token 0 fell to 1.5
  // 1.0 is no penalty: the prompt does not matter.
  Sampler none(params(0.0f));
  none.prompt({0});
  EXPECT_EQ(none.sample(l.data(), 4), 0);
}

TEST(Sampler, LogprobsAreTheLogSoftmaxOfTheAdjustedLogits) {
  const std::vector<float> l = make_logits(50, 7);
  for (float temperature : {0.0f, 0.7f}) {
    SamplingParams p = params(temperature, 0, 1.0f, 3);
    p.logprobs = 4;
    p.logit_bias = {{10, 1.5f}};
    Sampler s(p);
    TokenLogprob lp;
    const int32_t tok = s.sample(l.data(), 50, &lp);
    std::vector<float> adj = l;
    adj[10] += 1.5f;
    const std::vector<double> pr = softmax(adj, 1.0);
    EXPECT_EQ(lp.token, tok);
    EXPECT_NEAR(lp.logprob, std::log(pr[tok]), 1e-5);
    ASSERT_EQ(lp.top.size(), 4u);
    std::vector<int32_t> order(50);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return pr[a] > pr[b]; });
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(lp.top[i].first, order[i]);
      EXPECT_NEAR(lp.top[i].second, std::log(pr[order[i]]), 1e-5);
    }
    if (temperature == 0.0f) EXPECT_EQ(tok, order[0]);
  }
  // Not asked for: untouched. An impossible token reports -9999, not -inf.
  Sampler plain(params(0.0f));
  TokenLogprob untouched;
  untouched.logprob = 42;
  plain.sample(l.data(), 50, &untouched);
  EXPECT_EQ(untouched.logprob, 42);
  SamplingParams p = params(1.0f);
  p.logprobs = 2;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> banned = {0.0f, -inf, -inf};
  Sampler b(p);
  TokenLogprob lp;
  EXPECT_EQ(b.sample(banned.data(), 3, &lp), 0);
  EXPECT_NEAR(lp.logprob, 0.0f, 1e-6);
  EXPECT_EQ(lp.top[1].second, -9999.0f);
}

namespace {

// A grammar over a made-up vocabulary: id 0 ends generation, the others spell bytes.
std::shared_ptr<const TokenGrammar> vocab_grammar(const std::string& gbnf,
                                                  const std::vector<std::string>& vocab) {
  auto g = std::make_shared<TokenGrammar>();
  g->rules = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  g->trie = std::make_shared<const grammar::TokenTrie>(vocab);
  g->end = {0};
  return g;
}

}  // namespace

TEST(Sampler, GrammarKeepsGreedyOutputInsideItAndEndsWhenComplete) {
  const std::vector<std::string> vocab = {"", "{", "}", "\"", "a", "b", ":", "1", "x", "\"a\""};
  SamplingParams p = params(0.0f);
  p.grammar = vocab_grammar(R"g(root ::= "{" "\"a\"" ":" [0-9]+ "}")g", vocab);
  Sampler s(p);
  // The model prefers "x", then ids in order; the grammar decides what is left.
  std::vector<float> logits = {0.5f, 1, 2, 3, 4, 5, 6, 7, 9, 0.1f};
  std::string out;
  for (int i = 0; i < 10 && !s.finished(); ++i) {
    const int32_t t = s.sample(logits.data(), int32_t(logits.size()));
    ASSERT_NE(t, 8) << "the grammar refuses x";
    out += vocab[size_t(t)];
    if (out.size() > 6) logits[7] = -1;  // enough digits: the model now prefers to stop
  }
  EXPECT_EQ(out, "{\"a\":11}");
  EXPECT_TRUE(s.finished());
}

TEST(Sampler, GrammarAllowsEndOnlyOnceTheOutputIsComplete) {
  const std::vector<std::string> vocab = {"", "a", "b"};
  SamplingParams p = params(0.0f);
  p.grammar = vocab_grammar(R"(root ::= "a" "b"*)", vocab);
  Sampler s(p);
  const std::vector<float> end_first = {5, 1, 0};
  EXPECT_EQ(s.sample(end_first.data(), 3), 1);  // "a" is required before the end
  EXPECT_FALSE(s.finished());
  EXPECT_EQ(s.sample(end_first.data(), 3), 0);  // now the end is allowed, and taken
  EXPECT_TRUE(s.finished());
}

TEST(Sampler, GrammarSamplesFromTheMaskedDistribution) {
  // Draw-then-check must give each allowed token its masked softmax probability.
  const std::vector<std::string> vocab = {"", "a", "b", "c", "d", "e", "f"};
  SamplingParams p = params(1.0f, 0, 1.0f, 99);
  p.grammar = vocab_grammar(R"(root ::= [ace] [a-f]*)", vocab);
  const std::vector<float> logits = {-9, 0.3f, 1.5f, -0.2f, 2.0f, 0.9f, 1.1f};
  std::vector<double> masked = {0, std::exp(0.3), 0, std::exp(-0.2), 0, std::exp(0.9), 0};
  double z = 0;
  for (double v : masked) z += v;
  const int draws = 40000;
  std::vector<double> f(logits.size());
  for (int i = 0; i < draws; ++i) {
    Sampler s(p);  // the first token each time: only a, c, e allowed
    p.seed += 1;
    f[size_t(s.sample(logits.data(), int32_t(logits.size())))] += 1.0 / draws;
  }
  for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], masked[i] / z, 0.01) << i;
}
}  // namespace sy::text
