#include "app/background_row_count.h"

#include <algorithm>

#include "engine/input/dataset_row_count.h"

namespace sluice {

BackgroundRowCount::BackgroundRowCount(std::string path, DatasetFormat format, int64_t limit) {
  thread_ = std::thread([this, path = std::move(path), format, limit] {
    const int64_t count = count_dataset_rows(path, format, &cancel_);
    total_.store(count >= 0 && limit > 0 ? std::min(count, limit) : count);
  });
}

BackgroundRowCount::~BackgroundRowCount() {
  cancel_.store(true);
  thread_.join();
}

}  // namespace sluice
