// One long-lived thread that runs forward passes for the engine, so the host thread can plan
// and prepare the next step meanwhile. Long-lived because backends keep per-thread state
// (oneDNN's OpenMP team, a GPU context binding) that a fresh thread per step would rebuild.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sy::engine {

class StepWorker {
 public:
  StepWorker();
  ~StepWorker();  // waits for the running job, then joins
  StepWorker(const StepWorker&) = delete;
  StepWorker& operator=(const StepWorker&) = delete;

  // Starts `job` on the worker; one job at a time (call wait() before the next). The job must
  // not throw.
  void start(std::function<void()> job);
  // Blocks until the started job has returned; returns at once when none is running.
  void wait();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace sy::engine
