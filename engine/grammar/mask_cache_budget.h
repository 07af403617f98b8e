// The bytes that the cached token masks of compiled grammars may take together. Every grammar a
// client sends caches a mask per stack context it meets (a vocabulary's worth of bits each), so
// a server that meets many grammars, or one grammar with many contexts, would keep them all; the
// grammars of one engine share this budget, and a grammar that finds it spent drops its own
// cache and goes on computing masks uncached (slower, never unbounded). Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>

namespace sluice {

// The default budget of one engine's grammar masks.
inline constexpr size_t kDefaultMaskCacheBytes = size_t{256} << 20;

class MaskCacheBudget {
 public:
  explicit MaskCacheBudget(size_t max_bytes = kDefaultMaskCacheBytes) : max_bytes_(max_bytes) {}

  // Takes bytes from the budget; returns false (taking nothing) when that would pass it.
  bool try_reserve(size_t bytes) {
    size_t used = used_bytes_.load(std::memory_order_relaxed);
    do {
      if (bytes > max_bytes_ - used) return false;
    } while (!used_bytes_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return true;
  }
  // Gives back bytes taken by try_reserve.
  void release(size_t bytes) { used_bytes_.fetch_sub(bytes, std::memory_order_relaxed); }

  size_t used_bytes() const { return used_bytes_.load(std::memory_order_relaxed); }
  size_t max_bytes() const { return max_bytes_; }

 private:
  const size_t max_bytes_;
  std::atomic<size_t> used_bytes_{0};
};

}  // namespace sluice
