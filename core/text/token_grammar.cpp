#include "text/token_grammar.h"

#include <algorithm>
#include <limits>

#include "text/tokenizer.h"

namespace sy::text {

namespace {
// Interned matcher states kept before the matcher forgets all but the current one.
constexpr size_t kMaxStates = 20000;
// Masks kept per request (each one byte per token).
constexpr size_t kMaxMasks = 16;
}  // namespace

std::shared_ptr<const TokenGrammar> TokenGrammar::make(
    const Tokenizer& tokenizer, std::shared_ptr<const grammar::Grammar> rules) {
  auto g = std::make_shared<TokenGrammar>();
  g->rules = std::move(rules);
  g->trie = tokenizer.token_trie();
  g->end = tokenizer.end_of_generation();
  return g;
}

GrammarState::GrammarState(std::shared_ptr<const TokenGrammar> grammar)
    : g_(std::move(grammar)), matcher_(g_->rules) {
  state_.set = matcher_.start();
}

bool GrammarState::is_end(int32_t token) const {
  return std::binary_search(g_->end.begin(), g_->end.end(), token);
}

bool GrammarState::allows(int32_t token) {
  if (failed_ || ended_) return is_end(token);
  if (is_end(token)) return state_.need == 0 && matcher_.accepting(state_.set);
  if (token < 0 || token >= g_->trie->size() || g_->trie->bytes(token).empty()) return false;
  try {
    return grammar::TokenTrie::feed(matcher_, state_, g_->trie->bytes(token)).set !=
           grammar::Matcher::kDead;
  } catch (const grammar::Error&) {
    failed_ = true;
    return is_end(token);
  }
}

void GrammarState::mask(float* logits, int32_t n_vocab) {
  constexpr float kOff = -std::numeric_limits<float>::infinity();
  const std::vector<uint8_t>* allowed = nullptr;  // a cached mask is read where it is kept
  if (!failed_ && !ended_) {
    try {
      const auto hit = state_.need == 0 ? masks_.find(state_.set) : masks_.end();
      if (hit != masks_.end()) {
        allowed = &hit->second;
      } else {
        g_->trie->allowed(matcher_, state_, allowed_);
        if (state_.need == 0) {
          if (masks_.size() >= kMaxMasks) masks_.clear();
          masks_.emplace(state_.set, allowed_);
        }
        allowed = &allowed_;
      }
    } catch (const grammar::Error&) {
      failed_ = true;
    }
  }
  // The end tokens are decided last: their logits set aside, the rest masked in one pass.
  ends_.clear();
  for (int32_t id : g_->end)
    if (id >= 0 && id < n_vocab) ends_.push_back(logits[id]);
  const int32_t n = allowed ? std::min(n_vocab, int32_t(allowed->size())) : 0;
  const uint8_t* ok = allowed ? allowed->data() : nullptr;
  size_t kept = 0;
  for (int32_t id = 0; id < n; ++id) {
    kept += ok[id];
    if (!ok[id]) logits[id] = kOff;
  }
  for (int32_t id = n; id < n_vocab; ++id) logits[id] = kOff;
  size_t i = 0;
  for (int32_t id : g_->end)
    if (id >= 0 && id < n_vocab) {
      if (id < n) kept -= ok[id];
      logits[id] = ends_[i++];
    }
  // End tokens stay when the output may end here, or when nothing else is left.
  const bool end_ok =
      kept == 0 || failed_ || ended_ || (state_.need == 0 && matcher_.accepting(state_.set));
  if (!end_ok)
    for (int32_t id : g_->end)
      if (id >= 0 && id < n_vocab) logits[id] = kOff;
}

void GrammarState::accept(int32_t token) {
  if (failed_ || ended_) return;
  if (is_end(token)) {
    ended_ = true;
    return;
  }
  if (token < 0 || token >= g_->trie->size()) return;
  try {
    const grammar::ByteState next =
        grammar::TokenTrie::feed(matcher_, state_, g_->trie->bytes(token));
    if (next.set == grammar::Matcher::kDead) {
      failed_ = true;  // a token the mask refused: only when nothing was allowed
      return;
    }
    state_ = next;
    if (matcher_.size() > kMaxStates) {
      state_.set = matcher_.drop(state_.set);
      masks_.clear();  // state ids start over
    }
  } catch (const grammar::Error&) {
    failed_ = true;
  }
}

bool GrammarState::finished() const {
  return failed_ || ended_ || (state_.need == 0 && matcher_.finished(state_.set));
}

}  // namespace sy::text
