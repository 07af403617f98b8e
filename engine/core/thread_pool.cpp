#include "engine/core/thread_pool.h"

#include <algorithm>
#include <cassert>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#define SLUICE_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define SLUICE_CPU_RELAX() asm volatile("yield")
#else
#define SLUICE_CPU_RELAX() ((void)0)
#endif

namespace sluice {

namespace {

// How long a wait spins before it blocks: the serial gap between two loops of a step is
// usually shorter, and a thread that shares its core with the one it waits for (a loaded
// machine) holds that core up for at most this long. 20 us made a worker block and be woken
// (a futex call, costly in a VM) about 50 times a decode step of TinyLlama on a 2-core VM,
// whenever its half of a product ended 20 us before the caller's; at 200 us the step took
// 0.90-0.95x the time. The clock is read every kSpinsPerClockRead pauses; a pause lasts from 10
// to 150 cycles depending on the CPU.
constexpr auto kSpinTime = std::chrono::microseconds(200);
constexpr int kSpinsPerClockRead = 32;

// Spins until done() or kSpinTime has passed; returns done().
template <typename Done>
bool spin_until(const Done& done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  while (true) {
    for (int i = 0; i < kSpinsPerClockRead; ++i) {
      if (done()) return true;
      SLUICE_CPU_RELAX();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

constexpr uint64_t kRoundShift = 32;
constexpr uint64_t kChunksShift = 16;
constexpr uint64_t kFieldMask = 0xffff;
constexpr int kMaxThreads = static_cast<int>(kFieldMask);

uint32_t round_of(uint64_t claims) {
  return static_cast<uint32_t>(claims >> kRoundShift);
}
int num_chunks_of(uint64_t claims) {
  return static_cast<int>((claims >> kChunksShift) & kFieldMask);
}
int next_chunk_of(uint64_t claims) {
  return static_cast<int>(claims & kFieldMask);
}

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
  num_threads = std::min(num_threads, kMaxThreads);
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stopping_.store(true);
  round_.fetch_add(1);
  round_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t min_chunk, int chunks_per_thread) {
  if (n <= 0) return;
  const int64_t max_chunks =
      std::min<int64_t>(kFieldMask, std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk)));
  const int num_chunks = static_cast<int>(
      std::min<int64_t>(int64_t{num_threads()} * std::max(1, chunks_per_thread), max_chunks));
  if (num_chunks == 1 || num_threads() == 1) {
    fn(0, n);
    return;
  }
  assert(chunks_left_.load() == 0);  // not reentrant
  task_ = &fn;
  task_n_ = n;
  chunks_left_.store(num_chunks, std::memory_order_relaxed);
  const uint32_t round = round_.load(std::memory_order_relaxed) + 1;
  claims_.store(static_cast<uint64_t>(round) << kRoundShift | static_cast<uint64_t>(num_chunks)
                                                                  << kChunksShift,
                std::memory_order_relaxed);
  // Sequentially consistent with the workers' registration in wait_for_round: either this load
  // sees a blocked worker, or that worker sees the new round before it blocks.
  round_.store(round);
  if (num_blocked_workers_.load() > 0) round_.notify_all();
  run_chunks(round);
  wait_for_chunks();
}

// Claims and runs chunks of the given round until none is left to claim.
void ThreadPool::run_chunks(uint32_t round) {
  uint64_t claims = claims_.load(std::memory_order_acquire);
  while (true) {
    if (round_of(claims) != round || next_chunk_of(claims) >= num_chunks_of(claims)) return;
    if (!claims_.compare_exchange_weak(claims, claims + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      continue;  // claims now holds the current value
    }
    const auto [begin, end] = chunk_range(task_n_, num_chunks_of(claims), next_chunk_of(claims));
    (*task_)(begin, end);
    // Sequentially consistent with the caller's registration in wait_for_chunks.
    if (chunks_left_.fetch_sub(1) == 1 && is_caller_blocked_.load()) chunks_left_.notify_one();
    claims = claims_.load(std::memory_order_acquire);
  }
}

// Returns when every chunk of the current loop is done: spins, then blocks on chunks_left_
// (the thread that finishes the last chunk wakes the caller).
void ThreadPool::wait_for_chunks() {
  if (spin_until([&] { return chunks_left_.load(std::memory_order_acquire) == 0; })) return;
  is_caller_blocked_.store(true);
  for (int left = chunks_left_.load(); left != 0; left = chunks_left_.load())
    chunks_left_.wait(left);
  is_caller_blocked_.store(false, std::memory_order_relaxed);
}

// Spins, then blocks, until the round moves past seen_round; false when stopping.
bool ThreadPool::wait_for_round(uint32_t seen_round) {
  const auto is_new = [&] { return round_.load(std::memory_order_acquire) != seen_round; };
  if (!spin_until(is_new)) {
    num_blocked_workers_.fetch_add(1);
    while (round_.load() == seen_round) round_.wait(seen_round);
    num_blocked_workers_.fetch_sub(1, std::memory_order_relaxed);
  }
  return !stopping_.load();
}

void ThreadPool::worker_loop() {
  uint32_t seen_round = 0;
  while (wait_for_round(seen_round)) {
    seen_round = round_.load(std::memory_order_acquire);
    run_chunks(seen_round);
  }
}

}  // namespace sluice
