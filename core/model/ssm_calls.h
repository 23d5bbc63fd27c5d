// How one forward pass runs its recurrent layers' conv and scan: normally one call over every
// sequence of the batch; with prefix-cache snapshots (SeqInput::snapshots), split so that each
// snapshot point inside a sequence's chunk ends a call, after which the state is copied out. A
// sequence's pieces run in order, one per call; snapshots at the end of a chunk need no split.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "model/model.h"

namespace sy::model {

struct SsmCall {
  uint32_t t0 = 0, n_tokens = 0;          // the batch tokens this call covers
  std::vector<uint32_t> seq_start{0};     // n_seqs + 1 offsets relative to t0
  std::vector<int32_t> slots;             // one state slot per sequence piece
  std::vector<std::pair<int32_t, int32_t>> copies;  // after the call: (state slot, snapshot slot)
};

// Throws std::logic_error for a snapshot point outside [1, n_tokens] or out of order.
std::vector<SsmCall> ssm_calls(const std::vector<SeqInput>& seqs);

// Restore and snapshot slots must be reserved slots that no sequence of the pass runs in;
// throws std::logic_error naming the slot otherwise.
void check_snapshot_slots(const std::vector<SeqInput>& seqs, const std::set<int32_t>& running,
                          uint32_t n_slots);

// Columns [c0, c0 + n) of an F32 tensor {ne0, ne1}: the tokens of one call.
sy_tensor columns(const sy_tensor& t, int64_t c0, int64_t n);

}  // namespace sy::model
