// The recurrent-state cache beside the KV cache: per recurrent layer a conv state
// {d_conv-1, channels, slot} and a scan state {d_state, d_inner, slot} of F32 in one backend
// buffer, sized as llama.cpp sizes them for every family (model/model_desc.h: a short
// convolution has no scan state). Fixed size per sequence; the engine hands out slots (one per
// running request) and a sequence's slot is zeroed when it starts over at position 0 (admission or
// recompute after a preemption), so nothing leaks from the slot's previous owner. Slots past the
// running requests' hold prefix-cache snapshots (model/state_snapshots.h), copied in and out whole.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "host/backend.h"

namespace sy::model {

class RecurrentState {
 public:
  RecurrentState(uint32_t n_layers, uint64_t conv_floats, uint64_t ssm_floats)
      : n_layers_(n_layers), conv_floats_(conv_floats), ssm_floats_(ssm_floats) {}

  // (Re)allocates n_slots zeroed slots; earlier contents are dropped.
  void reserve(Backend& backend, uint32_t n_slots, int64_t d_conv, int64_t channels,
               int64_t d_state, int64_t d_inner);
  uint32_t n_slots() const { return n_slots_; }
  uint64_t bytes_per_seq() const {
    return n_layers_ * (conv_floats_ + ssm_floats_) * sizeof(float);
  }
  uint64_t bytes_allocated() const { return bytes_per_seq() * n_slots_; }
  void reset(uint32_t slot);
  // Copies slot `from`'s state into slot `to` (prefix-cache snapshots and their restore): the
  // conv or the scan state of recurrent layer r, or both of every layer.
  void copy_conv(uint32_t r, uint32_t from, uint32_t to) { copy_row(conv_[r], conv_floats_, from, to); }
  void copy_ssm(uint32_t r, uint32_t from, uint32_t to) { copy_row(ssm_[r], ssm_floats_, from, to); }
  void copy(uint32_t from, uint32_t to);
  // Tensors of recurrent layer r (0-based among recurrent layers).
  const sy_tensor& conv(uint32_t r) const { return conv_[r]; }
  const sy_tensor& ssm(uint32_t r) const { return ssm_[r]; }

 private:
  void copy_row(const sy_tensor& t, uint64_t floats, uint32_t from, uint32_t to);
  uint32_t n_layers_;
  uint64_t conv_floats_, ssm_floats_;  // per sequence per layer
  uint32_t n_slots_ = 0;
  std::unique_ptr<Buffer> buf_;
  std::vector<sy_tensor> conv_, ssm_;
  std::vector<float> zeros_, staging_;
};

}  // namespace sy::model
