// The one loop that drives an Engine: the offline run (Engine::run_until_idle), the bench's
// replay and the server's runner all go through it. Each turn takes in new work, steps while
// there is any, and when a step ran nothing sleeps through the scheduler's wait window, which new
// work cuts short. The idle-sleep rule (how long, at least and at most) lives here only.
#pragma once

#include <cstdint>
#include <exception>

#include "engine/engine.h"

namespace sy::engine {

// Where the loop's work comes from and where its results go.
class WorkSource {
 public:
  virtual ~WorkSource() = default;
  // Hands new requests (and cancellations) to the engine; called before every step.
  virtual void intake(Engine& e) = 0;
  // False ends the loop; asked after every intake.
  virtual bool keep_going(const Engine& e) = 0;
  // Blocks until `until_ns` (host clock; INT64_MAX: no limit) or until new work may be there,
  // whichever comes first. Called when the engine is idle, or a step ran nothing.
  virtual void wait(const Engine& e, int64_t until_ns) = 0;
  virtual void before_step(Engine& e) { (void)e; }
  // After every step, with its wall time.
  virtual void after_step(Engine& e, const StepStats& st, int64_t t0_ns, int64_t dur_ns) {
    (void)e, (void)st, (void)t0_ns, (void)dur_ns;
  }
  // A step threw (a failed forward pass); the default lets it propagate out of run().
  virtual void step_failed(Engine& e, const std::exception& ex) {
    (void)e, (void)ex;
    throw;
  }
};

class EngineLoop {
 public:
  // A step that ran nothing sleeps at least this long (no spinning on a zero window) and at most
  // this long (a window past it is re-asked; arrivals cut any sleep short anyway).
  static constexpr int64_t kMinIdleSleepNs = 100'000;
  static constexpr int64_t kMaxIdleSleepNs = 50'000'000;

  // How long to sleep after a step that ran nothing, from the scheduler's wait window.
  static int64_t idle_sleep_ns(const StepStats& st);
  // Runs until the source says stop.
  static void run(Engine& e, WorkSource& src);
};

}  // namespace sy::engine
