#include "grammar/matcher.h"

#include <algorithm>
#include <string>

namespace sy::grammar {

size_t Matcher::StackHash::operator()(const Stack& s) const {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t v : s) h = (h ^ v) * 0x100000001b3ull;
  return size_t(h ^ (h >> 29));
}

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : g_(std::move(grammar)) {
  start_ = root();
}

// The root rule's alternatives, each expanded.
uint32_t Matcher::root() {
  const Grammar& g = *g_;
  std::vector<uint32_t> ids;
  size_t b = g.bodies[g.root];
  for (size_t e = b;; ++e) {
    const Op op = g.elements[e].op;
    if (op == Op::alt || op == Op::end) {
      expand(b == e ? Stack{} : Stack{uint32_t(b)}, ids);
      if (op == Op::end) break;
      b = e + 1;
    }
  }
  return intern_set(std::move(ids));
}

// Pushes onto `out` the ids of the stacks `stack` stands for once rule references on top are
// replaced by their alternatives. Terminates because the grammar has no left recursion.
void Matcher::expand(Stack stack, std::vector<uint32_t>& out) {
  const Grammar& g = *g_;
  if (stack.empty() || g.elements[stack.back()].op == Op::chars) {
    out.push_back(intern_stack(std::move(stack)));
    return;
  }
  const uint32_t pos = stack.back();
  stack.pop_back();
  const Op after = g.elements[pos + 1].op;
  if (after != Op::end && after != Op::alt) stack.push_back(pos + 1);
  const uint32_t rule = g.elements[pos].value;
  size_t b = g.bodies[rule];
  for (size_t e = b;; ++e) {
    const Op op = g.elements[e].op;
    if (op == Op::alt || op == Op::end) {
      Stack next = stack;
      if (e > b) next.push_back(uint32_t(b));
      expand(std::move(next), out);
      if (op == Op::end) break;
      b = e + 1;
    }
  }
}

uint32_t Matcher::intern_stack(Stack s) {
  const auto it = stack_ids_.find(s);
  if (it != stack_ids_.end()) return it->second;
  const auto id = uint32_t(stacks_.size());
  stacks_.push_back(s);
  stack_ids_.emplace(std::move(s), id);
  return id;
}

uint32_t Matcher::intern_set(std::vector<uint32_t> ids) {
  if (ids.empty()) return kDead;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto it = set_ids_.find(ids);
  if (it != set_ids_.end()) return it->second;
  const auto id = uint32_t(sets_.size());
  Set set;
  set.ascii.fill(kUnknown);
  for (uint32_t s : ids) set.accepting = set.accepting || stacks_[s].empty();
  set.stacks = ids;
  sets_.push_back(std::move(set));
  set_ids_.emplace(std::move(ids), id);
  return id;
}

uint32_t Matcher::compute(uint32_t set, uint32_t cp) {
  const Grammar& g = *g_;
  std::vector<uint32_t> out;
  const std::vector<uint32_t> stacks = sets_[set].stacks;  // expand() may grow sets_' storage
  for (uint32_t id : stacks) {
    if (stacks_[id].empty()) continue;
    const uint32_t pos = stacks_[id].back();
    if (!g.classes[g.elements[pos].value].matches(cp)) continue;
    Stack next(stacks_[id].begin(), stacks_[id].end() - 1);
    const Op after = g.elements[pos + 1].op;
    if (after != Op::end && after != Op::alt) next.push_back(pos + 1);
    expand(std::move(next), out);
    if (out.size() > kMaxStacks)
      throw Error("the grammar is too ambiguous: over " + std::to_string(kMaxStacks) +
                  " parses alive at once");
  }
  return intern_set(std::move(out));
}

uint32_t Matcher::step(uint32_t set, uint32_t cp) {
  if (cp < 128) {
    uint32_t& slot = sets_[set].ascii[cp];
    if (slot != kUnknown) return slot;
    const uint32_t next = compute(set, cp);
    sets_[set].ascii[cp] = next;  // sets_ may have moved
    return next;
  }
  const auto it = sets_[set].other.find(cp);
  if (it != sets_[set].other.end()) return it->second;
  const uint32_t next = compute(set, cp);
  sets_[set].other.emplace(cp, next);
  return next;
}

ByteState Matcher::feed(ByteState s, uint8_t b) {
  constexpr ByteState dead{kDead, 0, 0, 0};
  if (s.need == 0) {
    if (b < 0x80) return {step(s.set, b), 0, 0, 0};
    const uint8_t need = (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : 0;
    if (need == 0) return dead;
    const ByteState next{s.set, uint32_t(b & (0x3f >> need)), need, uint8_t(need + 1)};
    return can_complete(next) ? next : dead;
  }
  if ((b >> 6) != 2) return dead;
  const ByteState next{s.set, (s.partial << 6) | (b & 0x3fu), uint8_t(s.need - 1), s.size};
  if (!can_complete(next)) return dead;
  return next.need == 0 ? ByteState{step(s.set, next.partial), 0, 0, 0} : next;
}

bool Matcher::can_complete(const ByteState& s) const {
  if (s.set == kDead) return false;
  const uint32_t shift = 6u * s.need;
  uint32_t lo = s.partial << shift, hi = lo | ((1u << shift) - 1);
  if (s.size > 1) {  // the shortest form: no overlong sequences, no surrogates, <= U+10FFFF
    lo = std::max(lo, s.size == 2 ? 0x80u : s.size == 3 ? 0x800u : 0x10000u);
    hi = std::min(hi, 0x10FFFFu);
    if (lo > hi || (lo >= 0xD800 && hi <= 0xDFFF)) return false;
  }
  if (s.need == 0) return true;
  const Grammar& g = *g_;
  for (uint32_t id : sets_[s.set].stacks) {
    if (stacks_[id].empty()) continue;
    if (g.classes[g.elements[stacks_[id].back()].value].overlaps(lo, hi)) return true;
  }
  return false;
}

uint32_t Matcher::drop(uint32_t keep) {
  std::vector<Stack> live;
  for (uint32_t id : sets_[keep].stacks) live.push_back(stacks_[id]);
  stacks_.clear();
  stack_ids_.clear();
  sets_.clear();
  set_ids_.clear();
  std::vector<uint32_t> ids;
  for (Stack& s : live) ids.push_back(intern_stack(std::move(s)));
  const uint32_t kept = intern_set(std::move(ids));
  start_ = root();
  return kept;
}

}  // namespace sy::grammar
