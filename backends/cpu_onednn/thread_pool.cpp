#include "thread_pool.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace sy::cpu_onednn {
namespace {

// How long an idle worker polls before it sleeps: long enough to bridge the short serial gaps
// between the ops of one forward pass, short enough not to hold a shared core for long.
constexpr int kSpinRounds = 20000;  // x pause (~40 cycles each on recent x86): ~0.3 ms

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

int physical_core_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  std::set<std::pair<std::string, std::string>> cores;  // (package, core) of every usable CPU
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    std::ifstream pkg(dir + "physical_package_id"), core(dir + "core_id");
    std::string p, k;
    if (!(pkg >> p) || !(core >> k)) return CPU_COUNT(&set);  // no topology: count CPUs
    cores.emplace(p, k);
  }
  return cores.empty() ? 1 : (int)cores.size();
}

thread_local bool ThreadPool::t_inside_ = false;
thread_local int ThreadPool::t_thread_ = 0;

ThreadPool::ThreadPool(int threads)
    : threads_(threads < 1 ? 1 : threads), cursors_(new Cursor[threads_]) {
  workers_.reserve(threads_ - 1);
  for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { worker(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  epoch_.fetch_add(1);
  epoch_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::drain(uint32_t epoch, int thread) {
  uint64_t c = claim_.load(std::memory_order_acquire);
  while ((uint32_t)(c >> 32) == epoch) {
    const int64_t task = (int64_t)(c & 0xffffffffu);
    if (task >= n_tasks_.load(std::memory_order_acquire)) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
    // The claim succeeded while `epoch` was current, and the job cannot end before this task
    // is counted done, so fn_ and ctx_ are this job's.
    fn_.load(std::memory_order_relaxed)(ctx_.load(std::memory_order_relaxed), task, thread);
    done_.fetch_add(1, std::memory_order_release);
    c = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::run_erased(int64_t n_tasks, TaskFn fn, void* ctx) {
  const uint32_t epoch = ++last_epoch_;
  // Close the last job's claim word first: a worker still in drain() of that job holds its
  // final claim word (every task taken) and could otherwise read the new, larger n_tasks_ and
  // claim one task more of the old epoch, running a task of this job twice (once under each
  // epoch) and counting it in a done_ that is about to be reset. n_tasks_'s release store
  // makes the closed word visible to whoever reads the new count.
  claim_.store((uint64_t)epoch << 32 | kClosed, std::memory_order_relaxed);
  fn_.store(fn, std::memory_order_relaxed);
  ctx_.store(ctx, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  n_tasks_.store(n_tasks, std::memory_order_release);
  claim_.store((uint64_t)epoch << 32, std::memory_order_release);
  epoch_.store(epoch);  // seq_cst: pairs with a sleeper's increment before its own check
  if (sleepers_.load() > 0) epoch_.notify_all();
  t_inside_ = true;
  t_thread_ = 0;
  drain(epoch, 0);
  t_inside_ = false;
  // Only tasks another thread claimed are left; yield so that a claimant the OS preempted on
  // this core gets it back.
  for (int spins = 0; done_.load(std::memory_order_acquire) < n_tasks; ++spins) {
    if (spins < 2000)
      cpu_relax();
    else
      sched_yield();
  }
}

void ThreadPool::worker(int thread) {
  omp_set_num_threads(1);  // oneDNN called from a pool task runs on this thread alone
  pthread_setname_np(pthread_self(), "sy-cpu-pool");  // told apart in perf, top and gdb
  t_inside_ = true;
  t_thread_ = thread;
  uint32_t seen = 0;
  for (;;) {
    uint32_t e = epoch_.load();
    for (int i = 0; e == seen && i < kSpinRounds; ++i) {
      cpu_relax();
      e = epoch_.load(std::memory_order_relaxed);
    }
    while (e == seen) {
      sleepers_.fetch_add(1);
      e = epoch_.load();
      if (e == seen) epoch_.wait(seen);
      sleepers_.fetch_sub(1);
      e = epoch_.load();
    }
    if (stop_.load()) return;
    seen = e;
    drain(e, thread);
  }
}

}  // namespace sy::cpu_onednn
