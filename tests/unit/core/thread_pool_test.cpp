#include "engine/core/thread_pool.h"

#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace sluice {
namespace {

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n << " i " << i;
  }
}

TEST(ThreadPool, MinChunkLimitsTheNumberOfChunks) {
  ThreadPool pool(4);
  std::atomic<int> chunks{0};
  pool.parallel_for(
      100, [&](int64_t, int64_t) { chunks++; }, 60);
  EXPECT_EQ(chunks.load(), 1);
  chunks = 0;
  pool.parallel_for(
      100, [&](int64_t, int64_t) { chunks++; }, 30);
  EXPECT_EQ(chunks.load(), 3);
}

// Several chunks per thread, claimed as threads come free: every index once, the chunks as many
// as asked (within min_chunk and n), and a thread held up in its first chunk leaves the other
// chunks to the others.
TEST(ThreadPool, ChunksPerThreadSplitsFinerAndBalances) {
  ThreadPool pool(2);
  for (const int64_t n : {1, 5, 8, 9, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<int> chunks{0};
    pool.parallel_for(
        n,
        [&](int64_t begin, int64_t end) {
          chunks++;
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
        },
        1, 4);
    EXPECT_EQ(chunks.load(), std::min<int64_t>(n, 8)) << n;
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << n;
  }
  std::atomic<int> chunks{0};
  pool.parallel_for(
      100, [&](int64_t, int64_t) { chunks++; }, 30, 4);
  EXPECT_EQ(chunks.load(), 3);
  // Chunk 0 waits until the other seven have run: only a second thread can have run them.
  std::atomic<int> others{0};
  std::atomic<bool> timed_out{false};
  pool.parallel_for(
      8,
      [&](int64_t begin, int64_t) {
        if (begin != 0) {
          others++;
          return;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (others.load() < 7) {
          if (std::chrono::steady_clock::now() > deadline) {
            timed_out = true;
            return;
          }
          std::this_thread::yield();
        }
      },
      1, 4);
  EXPECT_FALSE(timed_out.load());
  EXPECT_EQ(others.load(), 7);
}

TEST(ThreadPool, ManyShortLoopsInARowFinish) {
  ThreadPool pool(2);
  int64_t total = 0;
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 20000; ++round) {
    pool.parallel_for(4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sum += i;
    });
    total += 6;
  }
  EXPECT_EQ(sum.load(), total);
}

TEST(ThreadPool, SleepingWorkersWakeUpForLaterWork) {
  ThreadPool pool(2);
  std::atomic<int> calls{0};
  pool.parallel_for(2, [&](int64_t, int64_t) { calls++; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // long past the spin: workers sleep
  pool.parallel_for(2, [&](int64_t, int64_t) { calls++; });
  EXPECT_EQ(calls.load(), 4);
}

double cpu_seconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Rounds that need different numbers of threads follow each other closely, so a worker that
// sits one round out meets the next round while the caller prepares it: every index still runs
// exactly once per round.
TEST(ThreadPool, RoundsOfDifferentWidthsRunEveryIndexOnce) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(4);
  for (int round = 0; round < 3000; ++round) {
    const int64_t n = 2 + round % 3;
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "round " << round << " index " << i;
  }
}

// Waiting is cheap: the caller blocks while a worker's chunk runs long (it used to spin and then
// call sched_yield in a loop), and idle workers block between loops.
TEST(ThreadPool, ACallerWaitingForALongChunkBlocks) {
  ThreadPool pool(2);
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> is_other_chunk_running{false};
  double wait_start = 0.0;
  pool.parallel_for(2, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) {
      is_other_chunk_running = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return;
    }
    // Hold the caller's chunk until a worker runs the other one, which the caller then waits for.
    while (!is_other_chunk_running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    wait_start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  });
  const double caller_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - wait_start;
  EXPECT_LT(caller_cpu, 0.03) << "the caller used " << caller_cpu << " s of CPU in 0.3 s";
}

TEST(ThreadPool, IdleWorkersBlock) {
  ThreadPool pool(3);
  pool.parallel_for(3, [](int64_t, int64_t) {});
  const double before = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double workers_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - before;
  EXPECT_LT(workers_cpu, 0.03) << "idle workers used " << workers_cpu << " s of CPU in 0.3 s";
}

TEST(ThreadPool, PoolOfOneRunsInline) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.num_threads(), 1);
  const auto caller = std::this_thread::get_id();
  pool.parallel_for(10, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 10);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
}

}  // namespace
}  // namespace sluice
