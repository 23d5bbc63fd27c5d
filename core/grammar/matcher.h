// Walks a Grammar one code point (or one UTF-8 byte) at a time. A state is the set of parse
// stacks still alive, as llama.cpp's grammar keeps them; here the sets are interned and their
// transitions memoized, so the matcher grows into a DFA over the states a request actually
// visits, and masking a vocabulary (grammar/token_trie.h) is mostly table lookups.
// Not thread-safe: one per request.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace sy::grammar {

// A matcher state plus an incomplete UTF-8 sequence: `need` continuation bytes still to come,
// `partial` the bits so far, `size` the sequence's length. Only shortest-form UTF-8 passes:
// an overlong "\xE0\x81\xBB" is not a '{'.
struct ByteState {
  uint32_t set = 0;
  uint32_t partial = 0;
  uint8_t need = 0;
  uint8_t size = 0;
};

class Matcher {
 public:
  static constexpr uint32_t kDead = UINT32_MAX;

  explicit Matcher(std::shared_ptr<const Grammar> grammar);

  uint32_t start() const { return start_; }
  // The state after code point `cp`, or kDead when no stack takes it. Throws Error when a
  // grammar keeps more than kMaxStacks parses alive (an ambiguity that would stall the engine).
  uint32_t step(uint32_t set, uint32_t cp);
  // The same for one byte of UTF-8; a state whose set is kDead is dead.
  ByteState feed(ByteState s, uint8_t byte);
  // Some parse is complete (end of output allowed) / the only thing left is to stop.
  bool accepting(uint32_t set) const { return sets_[set].accepting; }
  bool finished(uint32_t set) const {
    return sets_[set].accepting && sets_[set].stacks.size() == 1;
  }
  // Whether the UTF-8 sequence in progress can still become a code point some stack takes.
  bool can_complete(const ByteState& s) const;
  // States interned so far; drop() forgets all but `keep`, whose new id it returns (the memory a
  // long generation would otherwise hold).
  size_t size() const { return sets_.size(); }
  uint32_t drop(uint32_t keep);

 private:
  using Stack = std::vector<uint32_t>;  // element positions, top last; tops are Op::chars
  struct StackHash {
    size_t operator()(const Stack& s) const;
  };
  struct Set {
    std::vector<uint32_t> stacks;  // interned stack ids, sorted
    bool accepting = false;        // holds the empty stack
    std::array<uint32_t, 128> ascii;
    std::unordered_map<uint32_t, uint32_t> other;  // code points >= 128
  };
  static constexpr uint32_t kUnknown = UINT32_MAX - 1;

  static constexpr size_t kMaxStacks = 4096;

  uint32_t root();
  void expand(Stack stack, std::vector<uint32_t>& out);
  uint32_t intern_stack(Stack s);
  uint32_t intern_set(std::vector<uint32_t> ids);
  uint32_t compute(uint32_t set, uint32_t cp);

  std::shared_ptr<const Grammar> g_;
  std::vector<Stack> stacks_;
  std::unordered_map<Stack, uint32_t, StackHash> stack_ids_;
  std::vector<Set> sets_;
  std::unordered_map<Stack, uint32_t, StackHash> set_ids_;  // by sorted stack ids
  uint32_t start_ = 0;
};

}  // namespace sy::grammar
