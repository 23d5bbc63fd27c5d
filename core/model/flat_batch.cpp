#include "model/flat_batch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"

namespace sy::model {

namespace {

// A sliding-window table must hold a block from the window of the sequence's first token to its
// last token.
void check_window_table(const SeqInput& s, uint32_t block_size, uint32_t window) {
  if (!s.window_blocks) throw sy::Bug("forward: a sequence has no sliding-window table");
  const std::vector<int32_t>& t = *s.window_blocks;
  const uint32_t first = s.pos0 >= window ? (s.pos0 - window + 1) / block_size : 0;
  const uint32_t end = (s.pos0 + s.n_tokens + block_size - 1) / block_size;
  if (end > t.size() ||
      std::any_of(t.begin() + first, t.begin() + end, [](int32_t b) { return b < 0; }))
    throw sy::Bug("forward: sequence's sliding-window table lacks a block of its window");
}

}  // namespace

FlatBatch flatten_batch(const std::vector<SeqInput>& seqs, uint32_t block_size, uint32_t n_vocab,
                        bool all_logits, bool paged, uint32_t window) {
  FlatBatch bt;
  bt.n_seqs = static_cast<uint32_t>(seqs.size());
  const int32_t bs = static_cast<int32_t>(block_size);
  const bool windowed = paged && window > 0;
  if (paged) {
    for (const auto& s : seqs) {
      if (!s.blocks) throw sy::Bug("forward: a sequence has no block table");
      if ((s.pos0 + s.n_tokens + block_size - 1) / block_size > s.blocks->size())
        throw sy::Bug("forward: sequence's block table is too short for its tokens");
      bt.max_blocks = std::max<uint32_t>(bt.max_blocks, s.blocks->size());
      if (windowed) check_window_table(s, block_size, window);
    }
    bt.tables.assign(seqs.size() * bt.max_blocks, 0);
    if (windowed) bt.window_tables.assign(seqs.size() * bt.max_blocks, 0);
  }
  for (size_t si = 0; si < seqs.size(); ++si) {
    const SeqInput& s = seqs[si];
    if (paged)
      std::copy(s.blocks->begin(), s.blocks->end(), bt.tables.begin() + si * bt.max_blocks);
    if (windowed)
      for (size_t b = 0; b < s.window_blocks->size() && b < bt.max_blocks; ++b)
        bt.window_tables[si * bt.max_blocks + b] = std::max((*s.window_blocks)[b], 0);
    for (uint32_t i = 0; i < s.n_tokens; ++i) {
      const int32_t p = static_cast<int32_t>(s.pos0 + i);
      if (s.tokens[i] < 0 || s.tokens[i] >= static_cast<int32_t>(n_vocab))
        throw sy::Error("forward: token id " + std::to_string(s.tokens[i]) + " outside the vocab");
      if (s.want_logits && (all_logits || s.all_logits || i + 1 == s.n_tokens))
        bt.out_rows.push_back(bt.n_tokens());
      bt.ids.push_back(s.tokens[i]);
      bt.pos.push_back(p);
      if (paged) bt.kv_slots.push_back((*s.blocks)[p / bs] * bs + p % bs);
      if (windowed) bt.window_slots.push_back((*s.window_blocks)[p / bs] * bs + p % bs);
    }
    bt.seq_start.push_back(bt.n_tokens());
  }
  return bt;
}

}  // namespace sy::model
