// The engine requests behind one HTTP request: one per prompt (each with n samples), submitted
// together and read together. Events come back tagged with their choice index (prompt index
// times n plus sample index), and one condition variable wakes the reader for all of them.
// Destroying the group aborts whatever has not finished (a client that went away).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/service/engine_service.h"

namespace sluice {

struct ChoiceEvent {
  int choice_index = 0;
  size_t prompt_idx = 0;
  StreamEvent event;
};

class RequestGroup {
 public:
  // Submits every request (in order; request i is prompt i). Throws what EngineService::submit
  // throws (QueueFull, Error); the requests submitted before then are aborted.
  RequestGroup(EngineService& service, std::vector<ServiceRequest> requests);
  ~RequestGroup();
  RequestGroup(const RequestGroup&) = delete;
  RequestGroup& operator=(const RequestGroup&) = delete;

  // Returns the events that arrived, waiting up to timeout for the first; empty when none came
  // or everything is done.
  std::vector<ChoiceEvent> wait(std::chrono::milliseconds timeout);
  // True once every sample of every request finished and its events were taken.
  bool is_done() const;

 private:
  struct Wake {
    std::mutex mutex;
    std::condition_variable ready;
    bool has_news = false;
  };
  std::shared_ptr<Wake> wake_;  // shared with the streams' callbacks
  std::vector<std::unique_ptr<RequestHandle>> handles_;
  std::vector<int> num_samples_;
};

}  // namespace sluice
