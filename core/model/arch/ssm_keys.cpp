#include "model/arch/ssm_keys.h"

namespace sy::model {

void read_mamba1_sizes(const KeyReader& k, ModelDesc& d) {
  d.d_conv = k.u32(Key::ssm_conv_kernel);
  d.d_inner = k.u32(Key::ssm_inner_size);
  d.d_state = k.u32(Key::ssm_state_size);
  d.dt_rank = k.u32(Key::ssm_time_step_rank);
  if (d.d_inner != 2 * d.n_embd)
    throw k.fail(k.name(Key::ssm_inner_size) +
                 " must be 2 * embedding_length (llama.cpp supports only that)");
  if (d.d_conv == 0 || d.d_state == 0 || d.dt_rank == 0)
    throw k.fail(k.name(Key::ssm_conv_kernel) + ", state_size and time_step_rank must be positive");
}

void write_mamba1_sizes(KeyWriter& k, const ModelDesc& d) {
  k.u32(Key::ssm_conv_kernel, d.d_conv);
  k.u32(Key::ssm_inner_size, d.d_inner);
  k.u32(Key::ssm_state_size, d.d_state);
  k.u32(Key::ssm_time_step_rank, d.dt_rank);
}

void read_mamba2_sizes(const KeyReader& k, ModelDesc& d, bool two_e) {
  d.d_conv = k.u32(Key::ssm_conv_kernel);
  d.d_inner = k.u32(Key::ssm_inner_size);
  d.d_state = k.u32(Key::ssm_state_size);
  d.dt_rank = k.u32(Key::ssm_time_step_rank);
  d.n_group = k.u32(Key::ssm_group_count);
  if (d.d_conv == 0 || d.d_state == 0 || d.dt_rank == 0 || d.n_group == 0 || d.d_inner == 0)
    throw k.fail(k.name(Key::ssm_conv_kernel) +
                 ", inner_size, state_size, time_step_rank and group_count must be positive");
  if (two_e && d.d_inner != 2 * d.n_embd)
    throw k.fail(k.name(Key::ssm_inner_size) +
                 " must be 2 * embedding_length (llama.cpp supports only that)");
  if (d.d_inner % d.dt_rank || d.d_inner % d.d_state || d.d_inner % d.n_group ||
      d.dt_rank % d.n_group)
    throw k.fail(k.name(Key::ssm_inner_size) + " (" + std::to_string(d.d_inner) +
                 ") must be a multiple of time_step_rank, state_size and group_count, and "
                 "time_step_rank of group_count");
}

void write_ssm_sizes(KeyWriter& k, const ModelDesc& d) {
  write_mamba1_sizes(k, d);
  k.u32(Key::ssm_group_count, d.n_group);
}

}  // namespace sy::model
