#include "model/recurrent_state.h"

#include <algorithm>
#include <cstring>

namespace sy::model {

void RecurrentState::reserve(Backend& backend, uint32_t n_slots, int64_t d_conv, int64_t channels,
                             int64_t d_state, int64_t d_inner) {
  conv_.clear();
  ssm_.clear();
  buf_.reset();
  n_slots_ = n_slots;
  const uint64_t layer_floats = (conv_floats_ + ssm_floats_) * n_slots;
  if (n_layers_ == 0 || layer_floats == 0) return;
  buf_ = backend.alloc(layer_floats * n_layers_ * sizeof(float));
  for (uint32_t r = 0; r < n_layers_; ++r) {
    const uint64_t off = r * layer_floats * sizeof(float);
    conv_.push_back(make_tensor(*buf_, SY_DTYPE_F32, {d_conv - 1, channels, n_slots}, off));
    ssm_.push_back(make_tensor(*buf_, SY_DTYPE_F32, {d_state, d_inner, n_slots},
                               off + conv_floats_ * n_slots * sizeof(float)));
  }
  for (uint32_t s = 0; s < n_slots; ++s) reset(s);
}

void RecurrentState::reset(uint32_t slot) {
  zeros_.resize(std::max(conv_floats_, ssm_floats_), 0.0f);
  for (uint32_t r = 0; r < conv_.size(); ++r) {
    buf_->write(conv_[r].offset + slot * conv_floats_ * sizeof(float), zeros_.data(),
                conv_floats_ * sizeof(float));
    if (ssm_floats_)
      buf_->write(ssm_[r].offset + slot * ssm_floats_ * sizeof(float), zeros_.data(),
                  ssm_floats_ * sizeof(float));
  }
}

}  // namespace sy::model

namespace sy::model {

void RecurrentState::copy_row(const sy_tensor& t, uint64_t floats, uint32_t from, uint32_t to) {
  if (from == to || floats == 0) return;
  const uint64_t n = floats * sizeof(float);
  const uint64_t src = t.offset + from * n, dst = t.offset + to * n;
  if (auto* p = static_cast<char*>(buf_->host_ptr())) {
    std::memcpy(p + dst, p + src, n);
    return;
  }
  staging_.resize(floats);  // a device buffer: through the host
  buf_->read(src, staging_.data(), n);
  buf_->write(dst, staging_.data(), n);
}

void RecurrentState::copy(uint32_t from, uint32_t to) {
  for (uint32_t r = 0; r < conv_.size(); ++r) {
    copy_conv(r, from, to);
    copy_ssm(r, from, to);
  }
}

}  // namespace sy::model
