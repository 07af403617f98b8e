// Where the streams of a job's requests leave word that a row has news: the streams' callbacks
// (on the service's thread) post the row's key, and the job's loop takes every key posted,
// waiting briefly for the first. Cheap to post: the callbacks run on the service's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

namespace sluice {

class JobInbox {
 public:
  // Posts a row's key (any thread).
  void post(uint64_t row_key) {
    {
      const std::lock_guard lock(mutex_);
      row_keys_.push_back(row_key);
    }
    ready_.notify_one();
  }
  // Returns the keys posted so far, waiting up to timeout for the first.
  std::vector<uint64_t> take(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    ready_.wait_for(lock, timeout, [&] { return !row_keys_.empty(); });
    std::vector<uint64_t> out;
    out.swap(row_keys_);
    return out;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<uint64_t> row_keys_;
};

}  // namespace sluice
