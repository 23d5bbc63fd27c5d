// A vocabulary as a byte trie, so a grammar mask walks each shared prefix once: the tokens a
// matcher state allows are found by one depth-first walk that prunes at the first byte no parse
// takes. Built once per vocabulary and shared by every request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grammar/matcher.h"

namespace sy::grammar {

class TokenTrie {
 public:
  // tokens[id]: the bytes token `id` adds to the output; "" for tokens a grammar never allows
  // (control tokens; the caller decides about end-of-generation).
  explicit TokenTrie(std::vector<std::string> tokens);

  const std::string& bytes(int32_t id) const { return tokens_[size_t(id)]; }
  int32_t size() const { return int32_t(tokens_.size()); }
  // allowed[id] = 1 for every token whose bytes the matcher takes from `state` (a trailing
  // incomplete UTF-8 sequence must still be completable), 0 for the rest.
  void allowed(Matcher& m, ByteState state, std::vector<uint8_t>& allowed) const;
  // The state after a token's bytes; set kDead when the grammar refuses them.
  static ByteState feed(Matcher& m, ByteState state, const std::string& bytes);

 private:
  struct Node {
    uint32_t first_child = 0, children = 0;  // children are contiguous
    uint32_t first_token = 0, tokens = 0;    // into ids_: the tokens that end here
    uint8_t byte = 0;
  };
  std::vector<std::string> tokens_;
  std::vector<Node> nodes_;
  std::vector<int32_t> ids_;  // token ids sorted by bytes
};

}  // namespace sy::grammar
