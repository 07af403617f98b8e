#include "engine/service/request_stream.h"

#include "engine/service/request_service.h"

#include <cassert>

namespace sluice {

RequestStream::RequestStream(uint32_t num_samples, std::function<void()> on_event)
    : num_samples_(num_samples),
      on_event_(std::move(on_event)),
      is_sample_finished_(num_samples, false) {}

void RequestStream::push(StreamEvent event) {
  {
    const std::lock_guard lock(mutex_);
    // A stream ends with its last sample's result; nothing may follow it.
    assert(num_finished_ < num_samples_);
    if (event.is_finished) {
      // Each sample finishes once.
      assert(event.finished.sample_idx < num_samples_ &&
             !is_sample_finished_[event.finished.sample_idx]);
      is_sample_finished_[event.finished.sample_idx] = true;
      ++num_finished_;
    }
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
  const std::lock_guard lock(callback_mutex_);
  if (on_event_) on_event_();
}

void RequestStream::detach_callback() {
  const std::lock_guard lock(callback_mutex_);
  on_event_ = nullptr;
}

std::optional<StreamEvent> RequestStream::pop(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  const auto is_ready = [&] { return !events_.empty() || num_finished_ == num_samples_; };
  if (deadline == Clock::time_point::max()) {
    ready_.wait(lock, is_ready);  // no timed wait: the far deadline would overflow
  } else {
    ready_.wait_until(lock, deadline, is_ready);
  }
  if (events_.empty()) return std::nullopt;
  StreamEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

std::vector<StreamEvent> RequestStream::take_all() {
  const std::lock_guard lock(mutex_);
  std::vector<StreamEvent> out(std::make_move_iterator(events_.begin()),
                               std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

bool RequestStream::is_finished() const {
  const std::lock_guard lock(mutex_);
  return num_finished_ == num_samples_;
}

std::vector<uint32_t> RequestStream::unfinished_samples() const {
  const std::lock_guard lock(mutex_);
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < num_samples_; ++i) {
    if (!is_sample_finished_[i]) out.push_back(i);
  }
  return out;
}

bool RequestStream::is_drained() const {
  const std::lock_guard lock(mutex_);
  return num_finished_ == num_samples_ && events_.empty();
}

RequestHandle::~RequestHandle() {
  stream_->detach_callback();  // the client that gave it may be going away
  if (!stream_->is_finished()) stream_->request_abort();
}

}  // namespace sluice
