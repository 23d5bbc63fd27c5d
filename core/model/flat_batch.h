// One forward pass's sequences flattened for the backend ops: token ids and positions, the KV
// slot each token writes, per-sequence token ranges, zero-padded block tables and the rows whose
// logits are wanted. Shared by every architecture.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace sy::model {

struct FlatBatch {
  std::vector<int32_t> ids, pos, kv_slots, out_rows, tables;
  // The same for the sliding-window layers' own pool (empty without one); the blocks before a
  // sequence's window read as block 0, which no attention reads.
  std::vector<int32_t> window_slots, window_tables;
  std::vector<uint32_t> seq_start{0};  // n_seqs + 1 offsets into ids
  uint32_t max_blocks = 1;             // row length of `tables` and `window_tables`
  uint32_t n_seqs = 0;
  uint32_t n_tokens() const { return static_cast<uint32_t>(ids.size()); }
  uint32_t n_out() const { return static_cast<uint32_t>(out_rows.size()); }
};

// `paged`: the model has attention layers, so every sequence needs a block table covering its
// tokens (kv_slots and tables are left empty otherwise). `window` (nonzero: the cache's
// sliding-window layers have their own pool): every sequence also needs a window table with a
// block from its first token's window to its last token. Throws std::logic_error for a missing
// or short block table and std::out_of_range for a token outside [0, n_vocab).
FlatBatch flatten_batch(const std::vector<SeqInput>& seqs, uint32_t block_size, uint32_t n_vocab,
                        bool all_logits, bool paged, uint32_t window = 0);

}  // namespace sy::model
