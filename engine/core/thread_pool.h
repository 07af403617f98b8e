// A fixed pool of worker threads for data-parallel loops. parallel_for splits [0, n) into
// contiguous chunks; the calling thread runs one chunk itself. Each element's result must not
// depend on the chunking, which keeps every output bit-identical for any thread count.
//
// A forward pass issues dozens of short parallel loops per step, so workers spin for a short
// while on an atomic generation counter before sleeping on a condition variable: waking a
// sleeping thread costs tens of microseconds, as much as a small loop itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice {

class ThreadPool {
 public:
  // num_threads <= 0 means one per hardware thread. A pool of 1 runs everything inline.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over disjoint chunks covering [0, n), at most one chunk per thread and
  // none smaller than min_chunk; returns when all chunks are done. Not reentrant: fn must not
  // call parallel_for on the same pool, and only one thread may call it at a time.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t min_chunk = 1);

 private:
  void worker_loop(int worker_idx);
  bool wait_for_work(uint64_t seen_generation);

  std::vector<std::thread> workers_;
  // The current task, published by the release increment of generation_.
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t task_n_ = 0;
  int num_chunks_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> chunks_pending_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // guards num_sleeping_ and the condition variable
  std::condition_variable work_ready_;
  int num_sleeping_ = 0;
};

}  // namespace sluice
