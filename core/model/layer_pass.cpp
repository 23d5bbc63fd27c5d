#include "model/layer_pass.h"

#include <stdexcept>
#include <string>

#include "switchyard/common/error.h"

namespace sy::model {

void Scratch::reserve(Backend& backend, uint64_t floats) {
  if (floats <= cap_) return;
  buf_.reset();
  buf_ = backend.alloc(floats * sizeof(float));
  cap_ = floats;
  used_ = 0;
}

sy_tensor Scratch::f32(std::initializer_list<int64_t> ne) {
  uint64_t n = 1;
  for (int64_t d : ne) n *= static_cast<uint64_t>(d);
  const uint64_t at = used_;
  const uint64_t end = at + (n + 15) / 16 * 16;  // 64-byte steps
  if (end > cap_)
    throw sy::Bug("scratch arena of " + std::to_string(cap_) + " floats is too small (" +
                  std::to_string(end) + " needed): a block's scratch size is wrong");
  used_ = end;
  return make_tensor(*buf_, SY_DTYPE_F32, ne, at * sizeof(float));
}

sy_tensor view(const sy_tensor& t, std::initializer_list<int64_t> ne) {
  sy_tensor v = t;
  int i = 0;
  int64_t n = 1, m = 1;
  for (int64_t d : ne) v.ne[i++] = d, n *= d;
  for (; i < 4; ++i) v.ne[i] = 1;
  for (int k = 0; k < 4; ++k) m *= t.ne[k];
  if (n != m) throw sy::Bug("view: element counts differ");
  return v;
}

}  // namespace sy::model
