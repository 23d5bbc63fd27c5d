// The one persistent thread pool of a cpu_onednn backend: every parallel kernel (GEMV, the
// sliced oneDNN GEMM, attention, element-wise ops) runs its tasks here.
//
// Made for few, shared cores: tasks are claimed one at a time from a shared counter, and the
// calling thread claims them too, so a worker that the OS has not scheduled yet (the other core
// is busy) just finds no task left; a call waits only for tasks already claimed. Idle workers
// spin briefly, then sleep on a futex (std::atomic::wait), so a sleeping pool costs nothing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace sy::cpu_onednn {

// Physical cores this process may run on (SMT siblings counted once); at least 1.
int physical_core_count();

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1, the caller included
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Runs f(task, thread) for every task in [0, n_tasks); thread is in [0, size()) and no two
  // tasks run on the same thread at once (per-thread scratch may be indexed by it). Returns when
  // all tasks are done. From inside a task (nested), or with one thread, runs inline.
  template <class F>
  void run(int64_t n_tasks, F&& f) {
    if (n_tasks <= 0) return;
    if (n_tasks == 1 || threads_ == 1 || t_inside_) {
      for (int64_t i = 0; i < n_tasks; ++i) f(i, t_inside_ ? t_thread_ : 0);
      return;
    }
    run_erased(n_tasks, &trampoline<F>, &f);
  }

  // Splits [0, n) into ranges of at least `grain` items (about four per thread, so a stalled
  // thread leaves the others work to take) and runs f(begin, end, thread) on each.
  template <class F>
  void parallel_for(int64_t n, int64_t grain, F&& f) {
    if (n <= 0) return;
    const int64_t per =
        std::max<int64_t>(std::max<int64_t>(1, grain), (n + 4 * threads_ - 1) / (4 * threads_));
    const int64_t tasks = (n + per - 1) / per;
    run(tasks, [&](int64_t t, int thread) { f(t * per, std::min(n, (t + 1) * per), thread); });
  }

  // As parallel_for, for streams that run faster unbroken (a GEMV's weight rows): [0, n) in one
  // contiguous share per thread, each walked front to back in chunks of at least `grain`; a
  // thread done with its share takes the next chunks of the others', so a stalled thread still
  // leaves the others work to take. Measured on 2 cores, Q4_K_M decode: 8% more tokens/s than
  // four interleaved ranges per thread (the hardware prefetchers restart at every range).
  // A share is kChunksPerShare chunks (or fewer, of `grain`): a thread that finds every chunk
  // taken waits for the last one in flight, so small chunks keep that tail short. Measured on
  // 2 cores, F32 decode of dense-100m: the caller's wait for the other thread is 8-11% of the
  // time in pool jobs at 4 chunks a share, 2-3.5% at 16, about the same at 32.
  // Share and chunk boundaries fall on multiples of `align` (packed weight groups) except at n.
  static constexpr int64_t kChunksPerShare = 16;
  template <class F>
  void parallel_shares(int64_t n, int64_t grain, F&& f, int64_t align = 1) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    const int64_t shares = std::min<int64_t>(threads_, (n + grain - 1) / grain);
    if (shares <= 1 || t_inside_) return f(0, n, t_inside_ ? t_thread_ : 0);
    const int64_t per_chunk = (n + kChunksPerShare * shares - 1) / (kChunksPerShare * shares);
    const int64_t chunk = (std::max(grain, per_chunk) + align - 1) / align * align;
    auto bound = [&](int64_t s) { return s == shares ? n : n * s / shares / align * align; };
    for (int64_t s = 0; s < shares; ++s) cursors_[s].next.store(0, std::memory_order_relaxed);
    run(shares, [&](int64_t first, int thread) {
      for (int64_t i = 0; i < shares; ++i) {
        const int64_t s = (first + i) % shares, begin = bound(s), end = bound(s + 1);
        for (;;) {
          const int64_t j0 =
              begin + chunk * cursors_[s].next.fetch_add(1, std::memory_order_relaxed);
          if (j0 >= end) break;
          f(j0, std::min(end, j0 + chunk), thread);
        }
      }
    });
  }

 private:
  using TaskFn = void (*)(void* ctx, int64_t task, int thread);
  template <class F>
  static void trampoline(void* ctx, int64_t task, int thread) {
    (*static_cast<F*>(ctx))(task, thread);
  }

  void run_erased(int64_t n_tasks, TaskFn fn, void* ctx);
  // Claims and runs tasks of job `epoch` until none is left.
  void drain(uint32_t epoch, int thread);
  void worker(int thread);

  static thread_local bool t_inside_;  // this thread is running a pool task
  static thread_local int t_thread_;

  const int threads_;
  // (epoch << 32) | next task: a claim is a compare-exchange that fails once the job changed,
  // so a late worker can never take a task of a later job with an earlier job's function.
  std::atomic<uint64_t> claim_{0};
  static constexpr uint64_t kClosed = 0xffffffffu;  // a next task no job reaches (n_tasks < 2^32)
  std::atomic<TaskFn> fn_{nullptr};
  std::atomic<void*> ctx_{nullptr};
  std::atomic<int64_t> n_tasks_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<uint32_t> epoch_{0};  // what sleeping workers wait on
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  uint32_t last_epoch_ = 0;  // the caller's side only
  std::vector<std::thread> workers_;
  struct alignas(64) Cursor {  // a share's next chunk, on its own cache line
    std::atomic<int64_t> next{0};
  };
  std::unique_ptr<Cursor[]> cursors_;  // one per thread
};

}  // namespace sy::cpu_onednn
