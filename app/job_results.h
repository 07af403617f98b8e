// A job's results on their way to its file: each is added to the store (which commits a batch at
// a time) and announced (counted in the progress, handed to on_row) only once a commit has made
// it durable, so whatever is shown survives a crash.
#pragma once

#include <deque>
#include <functional>
#include <unordered_set>
#include <vector>

#include "app/job_progress.h"
#include "engine/jobs/job_store.h"

namespace sluice {

class JobResults {
 public:
  using OnRow = std::function<void(const RowResult& row, double arrival_s)>;

  // store must outlive this object. unreadable: the stored rows that did not read back when the
  // job was opened (counted as unreadable in the file until a result replaces them).
  JobResults(JobStore& store, const std::vector<UnreadableRow>& unreadable);

  // Where committed rows are announced, with when their request arrived (empty: nowhere).
  void set_on_row(OnRow on_row) { on_row_ = std::move(on_row); }
  // Adds result to the store and announces the rows its commits made durable.
  void add(const RowResult& result, JobProgress& progress, double arrival_s);
  // Commits every row added and announces them.
  void flush(JobProgress& progress);
  // Rows added and not yet announced (waiting for a commit).
  size_t num_unannounced() const { return unannounced_.size(); }

 private:
  // A row added to the store and not yet committed, so not yet announced.
  struct UnannouncedRow {
    RowResult result;
    double arrival_s = 0.0;
  };

  void announce_committed(JobProgress& progress);
  void count_in_job(const RowResult& result, JobCounts& counts);

  JobStore& store_;
  std::unordered_set<int64_t> unreadable_row_indices_;  // counted as unreadable in the file
  std::deque<UnannouncedRow> unannounced_;
  OnRow on_row_;
};

}  // namespace sluice
