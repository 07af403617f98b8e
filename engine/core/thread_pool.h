// A fixed pool of worker threads for data-parallel loops. parallel_for splits [0, n) into
// contiguous chunks; the calling thread runs one chunk itself. Each element's result must not
// depend on the chunking, which keeps every output bit-identical for any thread count.
#pragma once

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
  // call parallel_for on the same pool.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t min_chunk = 1);

 private:
  void worker_loop(int worker_idx);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t task_n_ = 0;
  int num_chunks_ = 0;
  int chunks_remaining_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace sluice
