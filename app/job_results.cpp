#include "app/job_results.h"

#include <cassert>

namespace sluice {

JobResults::JobResults(JobStore& store, const std::vector<UnreadableRow>& unreadable)
    : store_(store) {
  for (const UnreadableRow& row : unreadable) unreadable_row_indices_.insert(row.row_index);
}

void JobResults::add(const RowResult& result, JobProgress& progress, double arrival_s) {
  store_.add_result(result);  // commits the queue now and then, this row included
  unannounced_.push_back({result, arrival_s});
  announce_committed(progress);
}

void JobResults::flush(JobProgress& progress) {
  store_.flush();
  announce_committed(progress);
}

// Keeps counts equal to the job file's after result's commit: a row that replaced an unreadable
// one moves out of the unreadable count.
void JobResults::count_in_job(const RowResult& result, JobCounts& counts) {
  if (unreadable_row_indices_.erase(result.row_index) > 0) --counts.unreadable;
  if (result.status == RowStatus::Done) ++counts.done;
  if (result.status == RowStatus::Failed) ++counts.failed;
  if (result.status == RowStatus::Skipped) ++counts.skipped;
}

// Announces the rows the store's last commits made durable: every added row but the queued ones.
void JobResults::announce_committed(JobProgress& progress) {
  // Every result reaches the store through add(), so the queue is a suffix of these.
  assert(store_.num_queued() <= unannounced_.size());
  const size_t num_committed = unannounced_.size() - store_.num_queued();
  for (size_t i = 0; i < num_committed; ++i) {
    const UnannouncedRow row = std::move(unannounced_.front());
    unannounced_.pop_front();
    ++progress.rows_done;
    if (row.result.status == RowStatus::Failed) ++progress.rows_failed;
    if (row.result.status == RowStatus::Skipped) ++progress.rows_skipped;
    count_in_job(row.result, progress.job);
    if (on_row_) on_row_(row.result, row.arrival_s);
  }
}

}  // namespace sluice
