#include "model/flat_batch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sy::model {

FlatBatch flatten_batch(const std::vector<SeqInput>& seqs, uint32_t block_size, uint32_t n_vocab,
                        bool all_logits, bool paged) {
  FlatBatch bt;
  bt.n_seqs = static_cast<uint32_t>(seqs.size());
  const int32_t bs = static_cast<int32_t>(block_size);
  if (paged) {
    for (const auto& s : seqs) {
      if (!s.blocks) throw std::logic_error("forward: a sequence has no block table");
      if ((s.pos0 + s.n_tokens + block_size - 1) / block_size > s.blocks->size())
        throw std::logic_error("forward: sequence's block table is too short for its tokens");
      bt.max_blocks = std::max<uint32_t>(bt.max_blocks, s.blocks->size());
    }
    bt.tables.assign(seqs.size() * bt.max_blocks, 0);
  }
  for (size_t si = 0; si < seqs.size(); ++si) {
    const SeqInput& s = seqs[si];
    if (paged)
      std::copy(s.blocks->begin(), s.blocks->end(), bt.tables.begin() + si * bt.max_blocks);
    for (uint32_t i = 0; i < s.n_tokens; ++i) {
      const int32_t p = static_cast<int32_t>(s.pos0 + i);
      if (s.tokens[i] < 0 || s.tokens[i] >= static_cast<int32_t>(n_vocab))
        throw std::out_of_range("forward: token id " + std::to_string(s.tokens[i]) +
                                " outside the vocab");
      if (s.want_logits && (all_logits || i + 1 == s.n_tokens))
        bt.out_rows.push_back(bt.n_tokens());
      bt.ids.push_back(s.tokens[i]);
      bt.pos.push_back(p);
      if (paged) bt.kv_slots.push_back((*s.blocks)[p / bs] * bs + p % bs);
    }
    bt.seq_start.push_back(bt.n_tokens());
  }
  return bt;
}

}  // namespace sy::model
