#include "app/server/request_group.h"

namespace sluice {

RequestGroup::RequestGroup(EngineService& service, std::vector<ServiceRequest> requests)
    : wake_(std::make_shared<Wake>()) {
  for (auto& request : requests) {
    num_samples_.push_back(request.sampling.n);
    handles_.push_back(service.submit(std::move(request), [wake = wake_] {
      {
        const std::lock_guard lock(wake->mutex);
        wake->has_news = true;
      }
      wake->ready.notify_all();
    }));
  }
}

RequestGroup::~RequestGroup() = default;  // the handles abort what is unfinished

std::vector<ChoiceEvent> RequestGroup::wait(std::chrono::milliseconds timeout) {
  {
    std::unique_lock lock(wake_->mutex);
    wake_->ready.wait_for(lock, timeout, [&] { return wake_->has_news; });
    wake_->has_news = false;
  }
  std::vector<ChoiceEvent> out;
  for (size_t i = 0; i < handles_.size(); ++i) {
    for (auto& event : handles_[i]->stream().take_all()) {
      const uint32_t sample_idx =
          event.is_finished ? event.finished.sample_idx : event.token.sample_idx;
      out.push_back({static_cast<int>(i) * num_samples_[i] + static_cast<int>(sample_idx), i,
                     std::move(event)});
    }
  }
  return out;
}

bool RequestGroup::is_done() const {
  for (const auto& handle : handles_) {
    if (!handle->stream().is_drained()) return false;
  }
  return true;
}

}  // namespace sluice
