// A fixed pool of worker threads for data-parallel loops. parallel_for splits [0, n) into
// contiguous chunks, at most one per thread, which the calling thread and the workers claim one
// at a time: the caller never waits for a chunk that no thread has started, so a worker that is
// asleep or has no core to run on costs a loop nothing but its share of the work. Each
// element's result must not depend on the chunking or on which thread runs a chunk, which keeps
// every output bit-identical for any thread count.
//
// A forward pass issues dozens of short parallel loops per step with serial work (norms, KV
// writes) between them, so a waiting thread spins for a short while and then blocks on the
// atomic itself (a futex on Linux): waking a blocked thread costs tens of microseconds, while
// spinning longer burns a core that the serial work or another process could use. A
// notification is only sent when someone is blocked.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
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

  // Runs fn(begin, end) over disjoint chunks covering [0, n), at most chunks_per_thread *
  // num_threads() chunks and none smaller than min_chunk, each on some thread of the pool;
  // returns when all are done. Threads claim chunks as they finish their last, so more chunks
  // per thread even out threads that run at different speeds (two hardware threads of one core,
  // a thread the host preempts) or chunks of different costs. Not reentrant: fn must not call
  // parallel_for on the same pool, and only one thread may call it at a time.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t min_chunk = 1, int chunks_per_thread = 1);

 private:
  void worker_loop();
  bool wait_for_round(uint32_t seen_round);
  void run_chunks(uint32_t round);
  void wait_for_chunks();

  std::vector<std::thread> workers_;
  // The current loop, written before its round is published and read only by threads that have
  // claimed one of its chunks (the caller waits for those before it writes the next loop).
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t task_n_ = 0;
  // The round (high 32 bits), its number of chunks (bits 16-31) and the next chunk to claim
  // (bits 0-15), claimed by compare-and-swap so that a thread late for a round never takes a
  // chunk of the next one.
  std::atomic<uint64_t> claims_{0};
  std::atomic<uint32_t> round_{0};   // workers block on it
  std::atomic<int> chunks_left_{0};  // the caller blocks on it
  std::atomic<int> num_blocked_workers_{0};
  std::atomic<bool> is_caller_blocked_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace sluice
