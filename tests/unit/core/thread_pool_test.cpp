#include "engine/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
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
