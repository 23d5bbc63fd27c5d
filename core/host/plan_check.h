// The checks of a scheduler's plan that need nothing but the view it answers: counts within
// capacity, known ids, none twice, preemptions of running requests only, token counts each
// request has to compute, the step's token budget and max_seqs. One function for every place a
// plan is judged: the engine (before its own KV-block check), the plugin runner and the tests'
// scheduling simulator.
#pragma once

#include "switchyard/abi/scheduler.h"

namespace sy {

// Throws sy::Error(SY_ERR_INVALID_ARG) naming the first violation: "entry 2: request 1 scheduled
// twice", "plan carries 81 tokens, over the budget of 24", ...
void check_plan(const sy_sched_view& view, const sy_sched_plan& plan);

}  // namespace sy
