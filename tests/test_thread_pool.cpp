// cpu_onednn's thread pool on its own: every task (every index of parallel_for and
// parallel_shares) runs exactly once, a thread never runs two tasks at once, nested calls run
// inline, and a job finishes while one of its tasks is stalled (the others are claimed by
// whoever is free: what keeps two shared cores from stalling).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "thread_pool.h"

namespace {

using sy::cpu_onednn::ThreadPool;

// Spins until ready() holds; false when 20 s pass first (the pool left a task stranded).
template <class Ready>
bool spin_until(Ready&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready())
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

TEST(ThreadPool, EveryTaskRunsOnceOnOneThreadAtATime) {
  for (int threads : {1, 2, 3, 8}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    std::vector<std::atomic<int>> busy(threads);
    for (int64_t n : {1, 2, 7, 64, 1000}) {
      for (int job = 0; job < 50; ++job) {  // many jobs back to back: epochs must not mix
        std::vector<std::atomic<int>> runs(n);
        std::atomic<bool> bad_thread{false}, overlap{false};
        pool.run(n, [&](int64_t task, int thread) {
          if (thread < 0 || thread >= threads) {
            bad_thread = true;
            return;
          }
          if (busy[thread].fetch_add(1) != 0) overlap = true;
          runs[task].fetch_add(1);
          busy[thread].fetch_sub(1);
        });
        ASSERT_FALSE(bad_thread);
        ASSERT_FALSE(overlap);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << "task " << i << " of " << n;
      }
    }
  }
}

TEST(ThreadPool, ParallelForCoversTheRangeOnceInGrains) {
  ThreadPool pool(2);
  for (int64_t n : {0, 1, 5, 100, 4097})
    for (int64_t grain : {1, 16, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> small{0};
      pool.parallel_for(n, grain, [&](int64_t b, int64_t e, int) {
        if (e - b < grain && e != n) small.fetch_add(1);  // only the last range may be short
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      EXPECT_EQ(small.load(), 0) << n << " " << grain;
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << grain << " " << i;
    }
}

// Shares: every index once, in chunks of at least `grain` that never cross a share's end (each
// thread's stream of weight rows stays contiguous), on threads of the pool.
TEST(ThreadPool, ParallelSharesCoversTheRangeOnceInChunksWithinShares) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 5, 100, 4097})
      for (int64_t grain : {1, 16, 1000}) {
        SCOPED_TRACE(std::to_string(threads) + " threads, n " + std::to_string(n) + ", grain " +
                     std::to_string(grain));
        const int64_t shares = std::min<int64_t>(threads, (n + grain - 1) / grain);
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> short_chunks{0}, crossing{0}, bad_thread{0};
        pool.parallel_shares(n, grain, [&](int64_t b, int64_t e, int thread) {
          if (thread < 0 || thread >= threads) bad_thread.fetch_add(1);
          if (shares > 1) {
            int64_t s = 0;  // the share b lies in: [n s / shares, n (s + 1) / shares)
            while (b >= n * (s + 1) / shares) ++s;
            if (e > n * (s + 1) / shares) crossing.fetch_add(1);
            if (e - b < grain && e != n * (s + 1) / shares) short_chunks.fetch_add(1);
          } else if (b != 0 || e != n) {
            crossing.fetch_add(1);  // one share: the whole range in one call
          }
          for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        EXPECT_EQ(bad_thread.load(), 0);
        EXPECT_EQ(crossing.load(), 0);
        EXPECT_EQ(short_chunks.load(), 0);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
      }
  }
}

TEST(ThreadPool, NestedRunsInlineOnTheCallingTasksThread) {
  ThreadPool pool(2);
  std::atomic<int> total{0}, wrong_thread{0};
  pool.run(4, [&](int64_t, int outer) {
    pool.run(5, [&](int64_t, int inner) {
      if (inner != outer) wrong_thread.fetch_add(1);
      total.fetch_add(1);
    });
  });
  EXPECT_EQ(total.load(), 20);
  EXPECT_EQ(wrong_thread.load(), 0);
}

// The piece at index 0 (task 0, or parallel_shares' first chunk) waits until every other
// index is done. With static partitioning (OpenMP's schedule(static)) the stalled thread would
// own half the work and this would never finish; here the other thread takes it all, with
// parallel_shares the rest of the stalled thread's share as well as its own.
TEST(ThreadPool, AStalledTaskDoesNotHoldTheOthersBack) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 20; ++rep)
    for (bool shares : {false, true}) {
      SCOPED_TRACE(shares ? "parallel_shares" : "run");
      const int64_t n = shares ? 1000 : 100;
      std::atomic<int64_t> done{0};
      std::atomic<bool> timed_out{false};
      auto piece = [&](int64_t b, int64_t e) {
        if (b == 0 && !spin_until([&] { return done.load() >= n - e; })) timed_out = true;
        done.fetch_add(e - b);
      };
      if (shares)
        pool.parallel_shares(n, 10, [&](int64_t b, int64_t e, int) { piece(b, e); });
      else
        pool.run(n, [&](int64_t task, int) { piece(task, task + 1); });
      EXPECT_EQ(done.load(), n);
      ASSERT_FALSE(timed_out);
    }
}

// A pool that has gone to sleep (idle longer than its spin) wakes for the next job: two tasks
// that each wait for the other to start can only finish on two threads at once.
TEST(ThreadPool, WakesAfterSleeping) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 3; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::atomic<int> started{0};
    std::atomic<bool> timed_out{false};
    pool.run(2, [&](int64_t, int) {
      started.fetch_add(1);
      if (!spin_until([&] { return started.load() >= 2; })) timed_out = true;
    });
    ASSERT_FALSE(timed_out) << "the sleeping worker never took the second task";
  }
}

}  // namespace
