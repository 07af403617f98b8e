// How far a job's run has come, as its callbacks and its end report it.
#pragma once

#include <cstdint>
#include <string>

#include "engine/jobs/job_store.h"

namespace sluice {

// Rows count here once committed to the job file, never before: what is shown is safe.
struct JobProgress {
  int64_t rows_done = 0;     // finished and committed this run (any status)
  int64_t rows_failed = 0;   // of which failed
  int64_t rows_skipped = 0;  // of which skipped bad rows
  int64_t rows_resumed = 0;  // found finished in the job and not run again
  int64_t rows_in_flight = 0;
  int64_t rows_committing = 0;  // finished, waiting for the commit that announces them
  int64_t rows_total = -1;      // known once the whole file has been read (or counted ahead)
  double file_fraction = 0.0;   // bytes of the input read so far
  // The job file's counts (rows of every run, a resumed job's earlier ones included): what it
  // held when run() started plus this run's commits, so they equal `sluice jobs show`.
  JobCounts job;
};

struct RunSummary {
  JobProgress progress;
  bool is_cancelled = false;
  std::string stop_error;  // a bad row that stopped the job (--on-bad-row stop), or ""
};

}  // namespace sluice
