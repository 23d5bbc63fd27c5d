#include "grammar/check.h"

#include <algorithm>

namespace sy::grammar {

bool CharClass::overlaps(uint32_t lo, uint32_t hi) const {
  if (!negated) {
    for (const auto& [a, b] : ranges)
      if (a <= hi && b >= lo) return true;
    return false;
  }
  // Some code point of [lo, hi] outside every range: walk the ranges in order of start.
  auto sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  uint64_t next = lo;  // smallest code point not yet known to be covered
  for (const auto& [a, b] : sorted) {
    if (a > next) break;
    next = std::max<uint64_t>(next, uint64_t(b) + 1);
  }
  return next <= hi;
}

namespace {

// Each alternative of rule r as [begin, end) element ranges.
template <typename F>
void for_each_alternative(const Grammar& g, uint32_t r, F f) {
  size_t b = g.bodies[r], e = b;
  for (;; ++e) {
    const Op op = g.elements[e].op;
    if (op == Op::alt || op == Op::end) {
      f(b, e);
      if (op == Op::end) return;
      b = e + 1;
    }
  }
}

}  // namespace

void check(const Grammar& g) {
  const size_t n = g.bodies.size();
  // Rules that can match the empty string, to a fixed point.
  std::vector<bool> nullable(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for_each_alternative(g, r, [&](size_t b, size_t e) {
        bool all = true;
        for (size_t k = b; k < e && all; ++k)
          all = g.elements[k].op == Op::rule && nullable[g.elements[k].value];
        if (all && !nullable[r]) nullable[r] = changed = true;
      });
    }
  }
  // Edges r -> s where s can come first in r; a cycle is left recursion.
  std::vector<std::vector<uint32_t>> first(n);
  for (uint32_t r = 0; r < n; ++r)
    for_each_alternative(g, r, [&](size_t b, size_t e) {
      for (size_t k = b; k < e; ++k) {
        if (g.elements[k].op != Op::rule) break;
        first[r].push_back(g.elements[k].value);
        if (!nullable[g.elements[k].value]) break;
      }
    });
  enum : uint8_t { unseen, open, done };
  std::vector<uint8_t> mark(n, unseen);
  std::vector<std::pair<uint32_t, size_t>> path;  // iterative DFS: (rule, next edge)
  for (uint32_t start = 0; start < n; ++start) {
    if (mark[start] != unseen) continue;
    path.push_back({start, 0});
    mark[start] = open;
    while (!path.empty()) {
      auto& [r, k] = path.back();
      if (k == first[r].size()) {
        mark[r] = done;
        path.pop_back();
        continue;
      }
      const uint32_t s = first[r][k++];
      if (mark[s] == open)
        throw Error("rule '" + g.names[s] +
                    "' is left-recursive: it can reach itself without consuming a character");
      if (mark[s] == unseen) {
        mark[s] = open;
        path.push_back({s, 0});
      }
    }
  }
}

}  // namespace sy::grammar
