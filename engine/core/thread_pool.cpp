#include "engine/core/thread_pool.h"

#include <algorithm>
#include <cassert>

namespace sluice {

namespace {

// Chunk c of num_chunks over [0, n): contiguous, sizes differ by at most one.
std::pair<int64_t, int64_t> chunk_range(int64_t n, int num_chunks, int c) {
  const int64_t base = n / num_chunks;
  const int64_t extra = n % num_chunks;
  const int64_t begin = c * base + std::min<int64_t>(c, extra);
  return {begin, begin + base + (c < extra ? 1 : 0)};
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
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
  {
    std::lock_guard lock(mutex_);
    assert(task_ == nullptr);  // not reentrant
    task_ = &fn;
    task_n_ = n;
    num_chunks_ = num_chunks;
    chunks_remaining_ = num_chunks - 1;
    ++generation_;
  }
  work_ready_.notify_all();
  const auto [begin, end] = chunk_range(n, num_chunks, 0);
  fn(begin, end);
  std::unique_lock lock(mutex_);
  work_done_.wait(lock, [this] { return chunks_remaining_ == 0; });
  task_ = nullptr;
}

void ThreadPool::worker_loop(int worker_idx) {
  uint64_t seen_generation = 0;
  while (true) {
    const std::function<void(int64_t, int64_t)>* task = nullptr;
    int64_t n = 0;
    int num_chunks = 0;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
      if (worker_idx >= num_chunks_) continue;  // this round needs fewer threads
      task = task_;
      n = task_n_;
      num_chunks = num_chunks_;
    }
    const auto [begin, end] = chunk_range(n, num_chunks, worker_idx);
    (*task)(begin, end);
    {
      std::lock_guard lock(mutex_);
      --chunks_remaining_;
    }
    work_done_.notify_one();
  }
}

}  // namespace sluice
