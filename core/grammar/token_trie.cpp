#include "grammar/token_trie.h"

#include <algorithm>
#include <deque>
#include <tuple>

namespace sy::grammar {

TokenTrie::TokenTrie(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  for (size_t id = 0; id < tokens_.size(); ++id)
    if (!tokens_[id].empty()) ids_.push_back(int32_t(id));
  std::sort(ids_.begin(), ids_.end(),
            [&](int32_t a, int32_t b) { return tokens_[size_t(a)] < tokens_[size_t(b)]; });
  // Breadth first, so each node's children are made together: (node, ids range, depth).
  nodes_.emplace_back();
  std::deque<std::tuple<uint32_t, size_t, size_t, size_t>> todo{{0, 0, ids_.size(), 0}};
  while (!todo.empty()) {
    const auto [node, lo, hi, depth] = todo.front();
    todo.pop_front();
    size_t j = lo;
    while (j < hi && tokens_[size_t(ids_[j])].size() == depth) ++j;
    nodes_[node].first_token = uint32_t(lo);
    nodes_[node].tokens = uint32_t(j - lo);
    nodes_[node].first_child = uint32_t(nodes_.size());
    while (j < hi) {
      const char b = tokens_[size_t(ids_[j])][depth];
      size_t k = j;
      while (k < hi && tokens_[size_t(ids_[k])][depth] == b) ++k;
      Node child;
      child.byte = uint8_t(b);
      nodes_.push_back(child);
      ++nodes_[node].children;
      todo.emplace_back(uint32_t(nodes_.size() - 1), j, k, depth + 1);
      j = k;
    }
  }
}

void TokenTrie::allowed(Matcher& m, ByteState state, std::vector<uint8_t>& out) const {
  out.assign(tokens_.size(), 0);
  std::vector<std::pair<uint32_t, ByteState>> todo{{0, state}};
  while (!todo.empty()) {
    const auto [n, s] = todo.back();
    todo.pop_back();
    const Node& node = nodes_[n];
    if (node.tokens && m.can_complete(s))
      for (uint32_t k = 0; k < node.tokens; ++k) out[size_t(ids_[node.first_token + k])] = 1;
    for (uint32_t c = 0; c < node.children; ++c) {
      const uint32_t child = node.first_child + c;
      const ByteState next = m.feed(s, nodes_[child].byte);
      if (next.set != Matcher::kDead) todo.emplace_back(child, next);
    }
  }
}

ByteState TokenTrie::feed(Matcher& m, ByteState state, const std::string& bytes) {
  for (const char c : bytes) {
    state = m.feed(state, uint8_t(c));
    if (state.set == Matcher::kDead) break;
  }
  return state;
}

}  // namespace sy::grammar
