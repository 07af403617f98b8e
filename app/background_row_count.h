// Counts an instruction file's rows on a thread of its own while a job runs, so the GUI can show
// rows finished of rows total from the first seconds of a run instead of bytes read. Cancelled
// and joined when destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "engine/input/dataset_format.h"

namespace sluice {

class BackgroundRowCount {
 public:
  // Starts counting path's rows (as count_dataset_rows); limit > 0 caps the total as a job's
  // --limit does.
  BackgroundRowCount(std::string path, DatasetFormat format, int64_t limit);
  ~BackgroundRowCount();
  BackgroundRowCount(const BackgroundRowCount&) = delete;
  BackgroundRowCount& operator=(const BackgroundRowCount&) = delete;

  // Returns the rows the job will go through, or -1 while the count runs (or when it failed).
  int64_t total() const { return total_.load(); }

 private:
  std::atomic<bool> cancel_{false};
  std::atomic<int64_t> total_{-1};
  std::thread thread_;
};

}  // namespace sluice
