// Helpers for tests of the engine service and its clients (tests/unit/service, tests/unit/server):
// a service over stories260K, and EventTurnstile, which stops the service's thread at an exact
// point so that a race can be lined up without sleeping.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/service/engine_service.h"
#include "tests/support/test_paths.h"

namespace sluice::test {

// stories260K, loaded once per test program.
inline std::shared_ptr<const ModelSession> stories260k_session() {
  static const auto session = std::make_shared<const ModelSession>(
      open_model_session(shared_path("models/stories260K/gguf/stories260K-f32.gguf"), ""));
  return session;
}

inline std::unique_ptr<EngineService> make_stories260k_service(const ServiceConfig& config = {}) {
  const auto session = stories260k_session();
  return std::make_unique<EngineService>(
      session, std::make_unique<CpuBackend>(*session->model, CpuBackendOptions{.num_threads = 2}),
      config);
}

inline std::vector<int32_t> stories260k_encode(const std::string& text) {
  const Tokenizer& tokenizer = *stories260k_session()->tokenizer;
  return tokenizer.encode(text, EncodeOptions{.add_bos = tokenizer.add_bos_default()});
}

// Stops the service's thread at each event of one request until the test lets it pass. A
// request's on_event runs on the service's thread right after the event is pushed, before the
// service goes on (to the step's other events, then the next step): while the thread stands
// there nothing is admitted, aborted, stepped or dispatched, so a test can put a submit, an abort
// or a disconnect at an exact point of a request's life. The one seam the service offers for
// this; it needs no hook of its own.
class EventTurnstile {
 public:
  // The request's on_event (it holds the turnstile, which so outlives the request).
  static std::function<void()> on_event(const std::shared_ptr<EventTurnstile>& turnstile) {
    return [turnstile] { turnstile->arrive(); };
  }

  // Waits until the service's thread stands at the request's next event; false after a minute.
  [[nodiscard]] bool wait_for_event() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] { return num_arrived_ > num_passed_; });
  }
  // Lets the event the thread stands at go on; it stops again at the next one.
  void pass() {
    {
      const std::lock_guard lock(mutex_);
      ++num_passed_;
    }
    changed_.notify_all();
  }
  // Lets this event and every later one go on.
  void open() {
    {
      const std::lock_guard lock(mutex_);
      is_open_ = true;
    }
    changed_.notify_all();
  }
  // The events that reached the turnstile so far.
  int num_events() const {
    const std::lock_guard lock(mutex_);
    return num_arrived_;
  }

 private:
  static constexpr std::chrono::seconds kPatience{60};

  void arrive() {
    std::unique_lock lock(mutex_);
    const int event = ++num_arrived_;
    changed_.notify_all();
    // A test that failed before letting the thread go must not hang the service forever.
    if (!changed_.wait_for(lock, kPatience, [&] { return is_open_ || num_passed_ >= event; })) {
      is_open_ = true;
      ADD_FAILURE() << "the service's thread stood at event " << event << " for a minute";
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int num_arrived_ = 0;
  int num_passed_ = 0;
  bool is_open_ = false;
};

// Opens a turnstile when it goes out of scope: declared after the handles, so that a test that
// fails while the thread stands at an event lets it go before a handle is destroyed (destroying
// the handle of the request it stands in waits for its on_event to return).
class OpenOnExit {
 public:
  explicit OpenOnExit(std::shared_ptr<EventTurnstile> turnstile)
      : turnstile_(std::move(turnstile)) {}
  ~OpenOnExit() { turnstile_->open(); }
  OpenOnExit(const OpenOnExit&) = delete;
  OpenOnExit& operator=(const OpenOnExit&) = delete;

 private:
  std::shared_ptr<EventTurnstile> turnstile_;
};

// A stream's events once it ended: the token deltas and each sample's result.
struct EndedStream {
  std::vector<TokenDelta> tokens;
  std::vector<FinishedRequest> finished;  // in the order they came
  bool has_ended = false;                 // every sample finished and every event was taken
};

// Reads the stream until it ends (at most a minute).
inline EndedStream read_to_end(RequestStream& stream) {
  EndedStream out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (auto event = stream.pop(deadline)) {
    if (event->is_finished) {
      out.finished.push_back(std::move(event->finished));
    } else {
      out.tokens.push_back(std::move(event->token));
    }
  }
  out.has_ended = stream.is_drained();
  return out;
}

}  // namespace sluice::test
