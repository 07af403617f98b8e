#include "engine/core/thread_pool.h"

#include <algorithm>
#include <cassert>

#if defined(__x86_64__)
#include <immintrin.h>
#define SLUICE_CPU_RELAX() _mm_pause()
#else
#define SLUICE_CPU_RELAX() std::this_thread::yield()
#endif

namespace sluice {

namespace {

// About 50-100 microseconds of spinning before a worker sleeps.
constexpr int kSpinIterations = 2000;

// Chunk c of num_chunks over [0, n): contiguous, sizes differ by at most one.
std::pair<int64_t, int64_t> chunk_range(int64_t n, int num_chunks, int c) {
  const int64_t base = n / num_chunks;
  const int64_t extra = n % num_chunks;
  const int64_t begin = c * base + std::min<int64_t>(c, extra);
  return {begin, begin + base + (c < extra ? 1 : 0)};
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0)
    num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t min_chunk) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  const int num_chunks = static_cast<int>(std::min<int64_t>(num_threads(), max_chunks));
  if (num_chunks == 1) {
    fn(0, n);
    return;
  }
  assert(chunks_pending_.load() == 0);  // not reentrant
  task_ = &fn;
  task_n_ = n;
  num_chunks_ = num_chunks;
  chunks_pending_.store(num_chunks - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  {
    std::lock_guard lock(mutex_);
    if (num_sleeping_ > 0) work_ready_.notify_all();
  }
  const auto [begin, end] = chunk_range(n, num_chunks, 0);
  fn(begin, end);
  for (int spins = 0; chunks_pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpinIterations) {
      SLUICE_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
}

// Spins, then sleeps, until the generation moves past seen_generation; false when stopping.
bool ThreadPool::wait_for_work(uint64_t seen_generation) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (generation_.load(std::memory_order_acquire) != seen_generation) return true;
    if (stopping_.load(std::memory_order_relaxed)) return false;
    SLUICE_CPU_RELAX();
  }
  std::unique_lock lock(mutex_);
  ++num_sleeping_;
  work_ready_.wait(lock, [&] {
    return stopping_.load() || generation_.load(std::memory_order_acquire) != seen_generation;
  });
  --num_sleeping_;
  return !stopping_.load();
}

void ThreadPool::worker_loop(int worker_idx) {
  uint64_t seen_generation = 0;
  while (wait_for_work(seen_generation)) {
    seen_generation = generation_.load(std::memory_order_acquire);
    if (worker_idx >= num_chunks_) continue;  // this round needs fewer threads
    const auto [begin, end] = chunk_range(task_n_, num_chunks_, worker_idx);
    (*task_)(begin, end);
    chunks_pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace sluice
