#include "engine/engine_loop.h"

#include <algorithm>
#include <climits>

#include "host/host_api.h"

namespace sy::engine {

int64_t EngineLoop::idle_sleep_ns(const StepStats& st) {
  return std::clamp<int64_t>(st.wait_ns, kMinIdleSleepNs, kMaxIdleSleepNs);
}

void EngineLoop::run(Engine& e, WorkSource& src) {
  for (;;) {
    src.intake(e);
    if (!src.keep_going(e)) return;
    if (e.idle()) {  // nothing to step until work arrives
      src.wait(e, INT64_MAX);
      continue;
    }
    src.before_step(e);
    const int64_t t0 = now_ns();
    StepStats st;
    try {
      st = e.step();
    } catch (const std::exception& ex) {
      src.step_failed(e, ex);
      continue;
    }
    const int64_t t1 = now_ns();
    src.after_step(e, st, t0, t1 - t0);
    if (st.n_seqs == 0) src.wait(e, t1 + idle_sleep_ns(st));
  }
}

}  // namespace sy::engine
