// The events of one submitted request, passed from the service's thread to its client: token
// deltas as they are sampled and one FinishedRequest per sample. Thread-safe: the service pushes,
// the client pops with a deadline (an HTTP stream) or is told through a cheap callback that
// something arrived (a loop that has its own wait, like a dataset job).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/engine.h"

namespace sluice {

struct StreamEvent {
  bool is_finished = false;
  TokenDelta token;          // when !is_finished
  FinishedRequest finished;  // when is_finished
};

class RequestStream {
 public:
  using Clock = std::chrono::steady_clock;

  // num_samples: how many FinishedRequest events end the stream. on_event (may be empty) runs
  // on the pushing thread after each push, with no lock held; it must be cheap.
  RequestStream(uint32_t num_samples, std::function<void()> on_event);

  // Service side: appends an event and wakes the client.
  void push(StreamEvent event);

  // Returns the next event, waiting until the deadline (time_point::max(): no limit); nullopt when
  // the deadline passed or the stream is over (every sample finished and every event taken).
  std::optional<StreamEvent> pop(Clock::time_point deadline);
  // Returns every event that has arrived, without waiting.
  std::vector<StreamEvent> take_all();

  // True once every sample's FinishedRequest was pushed.
  bool is_finished() const;
  // Returns the sample indices whose FinishedRequest has not been pushed yet.
  std::vector<uint32_t> unfinished_samples() const;
  // True once every sample finished and the client took every event.
  bool is_drained() const;

  // Stops on_event from running again; when this returns no call of it is in progress. Call it
  // without holding a lock that on_event takes.
  void detach_callback();

  // Asks the service to abort the request between steps (idempotent, any thread).
  void request_abort() { is_abort_requested_.store(true); }
  bool is_abort_requested() const { return is_abort_requested_.load(); }

  uint32_t num_samples() const { return num_samples_; }

 private:
  const uint32_t num_samples_;
  std::mutex callback_mutex_;  // held while on_event_ runs
  std::function<void()> on_event_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<StreamEvent> events_;
  uint32_t num_finished_ = 0;
  std::vector<bool> is_sample_finished_;  // [num_samples]
  std::atomic<bool> is_abort_requested_{false};
};

}  // namespace sluice
