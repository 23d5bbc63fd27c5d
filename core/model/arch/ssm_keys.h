// The ssm.* keys the state-space families read and write: Mamba-1's sizes (mamba, jamba) and
// Mamba-2's (mamba2 and the hybrids built on its layer).
#pragma once

#include "model/arch/keys.h"

namespace sy::model {

// ssm.conv_kernel, inner_size (2 * n_embd, as llama.cpp requires), state_size, time_step_rank.
void read_mamba1_sizes(const KeyReader& k, ModelDesc& d);
void write_mamba1_sizes(KeyWriter& k, const ModelDesc& d);

// ssm.conv_kernel, inner_size, state_size, time_step_rank (the head count), group_count; d_inner
// a multiple of the heads, of d_state and of the groups, the heads a multiple of the groups.
// `two_e`: inner_size must be 2 * n_embd (mamba2 and granitehybrid's loaders assert it).
void read_mamba2_sizes(const KeyReader& k, ModelDesc& d, bool two_e);
void write_ssm_sizes(KeyWriter& k, const ModelDesc& d);

}  // namespace sy::model
