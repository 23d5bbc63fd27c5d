#include "engine/step_worker.h"

#include <stdexcept>

#include "switchyard/common/error.h"

namespace sy::engine {

StepWorker::StepWorker() : thread_([this] { loop(); }) {}

StepWorker::~StepWorker() {
  wait();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void StepWorker::start(std::function<void()> job) {
  std::lock_guard<std::mutex> lk(mu_);
  if (busy_) throw sy::Bug("StepWorker::start: a job is still running");
  job_ = std::move(job);
  busy_ = true;
  cv_.notify_all();
}

void StepWorker::wait() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [this] { return !busy_; });
}

void StepWorker::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return stop_ || (busy_ && job_); });
    if (stop_) return;
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    lk.unlock();
    job();
    lk.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace sy::engine
