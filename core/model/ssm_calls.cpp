#include "model/ssm_calls.h"

#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"

namespace sy::model {

std::vector<SsmCall> ssm_calls(const std::vector<SeqInput>& seqs) {
  std::vector<SsmCall> calls(1);
  std::vector<std::pair<int32_t, int32_t>> at_end;  // snapshots of whole chunks: after the last call
  uint32_t t = 0;
  auto end_piece = [&](int32_t slot, uint32_t end) {
    SsmCall& c = calls.back();
    c.slots.push_back(slot);
    c.seq_start.push_back(end - c.t0);
  };
  for (const SeqInput& s : seqs) {
    uint32_t last = 0;
    if (s.snapshots)
      for (const StateSnapshot& snap : *s.snapshots) {
        if (snap.after <= last || snap.after > s.n_tokens)
          throw sy::Bug("forward: snapshot after token " + std::to_string(snap.after) + " of a " +
                        std::to_string(s.n_tokens) + "-token chunk (points must ascend within it)");
        last = snap.after;
        if (snap.after == s.n_tokens) {
          at_end.emplace_back(s.state_slot, snap.slot);
          continue;
        }
        end_piece(s.state_slot, t + snap.after);  // the state here is the snapshot: end the call
        calls.back().copies.emplace_back(s.state_slot, snap.slot);
        SsmCall next;
        next.t0 = t + snap.after;
        calls.push_back(std::move(next));
      }
    t += s.n_tokens;
    end_piece(s.state_slot, t);
  }
  for (auto& c : calls) c.n_tokens = c.seq_start.back();
  calls.back().copies.insert(calls.back().copies.end(), at_end.begin(), at_end.end());
  return calls;
}

void check_snapshot_slots(const std::vector<SeqInput>& seqs, const std::set<int32_t>& running,
                          uint32_t n_slots) {
  auto check = [&](int32_t slot, const char* what) {
    if (slot < 0 || static_cast<uint32_t>(slot) >= n_slots || running.count(slot))
      throw sy::Bug(std::string("forward: ") + what + " slot " + std::to_string(slot) +
                    " is not a free one of the " + std::to_string(n_slots) +
                    " reserved recurrent-state slots");
  };
  for (const SeqInput& s : seqs) {
    if (s.restore_from >= 0) check(s.restore_from, "restore");
    if (s.snapshots)
      for (const StateSnapshot& snap : *s.snapshots) check(snap.slot, "snapshot");
  }
}

sy_tensor columns(const sy_tensor& t, int64_t c0, int64_t n) {
  sy_tensor v = t;
  v.offset += static_cast<uint64_t>(c0 * t.ne[0]) * sizeof(float);
  v.ne[1] = n;
  return v;
}

}  // namespace sy::model
