// Counting the rows of an instruction file ahead of a run, so progress can be rows finished of
// rows total rather than bytes read. The count goes through the same reader a job uses, so it
// agrees with the job's row indices: a malformed row counts, since it holds an index (a job
// records it as skipped or stops on it).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "engine/input/dataset_format.h"

namespace sluice {

// Returns the number of rows (malformed ones included) of the file at path read as format, or
// -1 when *cancel became true first or the file cannot be read to its end (the job reports why).
int64_t count_dataset_rows(const std::string& path, DatasetFormat format = DatasetFormat::Auto,
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace sluice
