// The rope_ext arguments the op suites share: YaRN-capable settings (base 10000, scale 1/4,
// magnitude 1.25, a 4096 training context, llama.cpp's default betas) around a tensor.
#pragma once

#include "switchyard/abi/backend.h"

namespace sy::test {

inline sy_rope_ext_args rope_ext_args(const sy_tensor* x, const int32_t* pos, const sy_tensor* ff,
                                      uint32_t n_rot, uint32_t mode, float ext_factor) {
  sy_rope_ext_args a{};
  a.struct_size = sizeof a;
  a.mode = mode;
  a.x = x;
  a.pos = pos;
  a.freq_factors = ff;
  a.n_rot = n_rot;
  a.n_ctx_orig = 4096;
  a.freq_base = 10000.0f;
  a.freq_scale = 0.25f;
  a.ext_factor = ext_factor;
  a.attn_factor = 1.25f;
  a.beta_fast = 32.0f;
  a.beta_slow = 1.0f;
  return a;
}

}  // namespace sy::test
