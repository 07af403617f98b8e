#include "engine/input/dataset_row_count.h"

#include "engine/input/dataset_reader.h"

namespace sluice {

int64_t count_dataset_rows(const std::string& path, DatasetFormat format,
                           const std::atomic<bool>* cancel) {
  try {
    const auto reader = open_dataset(path, format);
    int64_t num_rows = 0;
    while (!(cancel && cancel->load(std::memory_order_relaxed))) {
      try {
        if (!reader->next()) return num_rows;
      } catch (const DatasetRowError&) {
        // The reader has moved past it; the row keeps its index in a job.
      }
      ++num_rows;
    }
  } catch (const Error&) {
    // Unreadable to the end: the job that reads it says why.
  }
  return -1;
}

}  // namespace sluice
