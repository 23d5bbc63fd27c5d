// A grammar bound to a vocabulary: what a sampler needs to keep a request's tokens inside a GBNF
// grammar, a JSON schema or a tool-call format. The token mask comes from the vocabulary's byte
// trie (built once per tokenizer, shared), walked from the request's matcher state.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/matcher.h"
#include "grammar/token_trie.h"

namespace sy::text {

class Tokenizer;

struct TokenGrammar {
  std::shared_ptr<const grammar::Grammar> rules;
  std::shared_ptr<const grammar::TokenTrie> trie;
  std::vector<int32_t> end;  // end-of-generation ids: allowed once the grammar is complete

  static std::shared_ptr<const TokenGrammar> make(const Tokenizer& tokenizer,
                                                  std::shared_ptr<const grammar::Grammar> rules);
};

// One request's walk through a TokenGrammar. A grammar that fails mid-way (too ambiguous) or
// leaves no token allowed ends the request: only end-of-generation tokens remain.
class GrammarState {
 public:
  explicit GrammarState(std::shared_ptr<const TokenGrammar> grammar);
  bool allows(int32_t token);
  // Sets the logits of the tokens the grammar refuses to -inf.
  void mask(float* logits, int32_t n_vocab);
  void accept(int32_t token);
  // The output is complete and nothing may follow it.
  bool finished() const;

 private:
  bool is_end(int32_t token) const;
  std::shared_ptr<const TokenGrammar> g_;
  grammar::Matcher matcher_;
  grammar::ByteState state_;
  bool failed_ = false, ended_ = false;
  std::vector<uint8_t> allowed_;
  std::vector<float> ends_;  // the end tokens' logits while a mask is applied
  // Masks of the states seen, by matcher state (no UTF-8 in progress): inside a JSON string the
  // state repeats at every character, and its mask over a large vocabulary is the costly one.
  std::unordered_map<uint32_t, std::vector<uint8_t>> masks_;
};

}  // namespace sy::text
