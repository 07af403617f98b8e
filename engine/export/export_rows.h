// Which rows an export takes and what each says, shared by the format writers.
#pragma once

#include <functional>

#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/row_result.h"

namespace sluice {

// Returns true when row goes into an export: done rows always; failed and skipped rows only when
// the format honours include_failed (jsonl, csv) and the options ask for them.
inline bool is_row_exported(const RowResult& row, const ExportOptions& options,
                            bool honours_include_failed) {
  if (row.status == RowStatus::Done) return true;
  return honours_include_failed && options.include_failed;
}

// Calls fn with every row of job that reads back, in row order; the others are counted in stats
// as unreadable (with their errors) and left out.
inline void for_each_readable_row(const JobStore& job, ExportStats& stats,
                                  const std::function<void(const RowResult&)>& fn) {
  job.for_each_result(fn, [&](const UnreadableRow& row) { stats.leave_out_unreadable(row); });
}

// Calls fn with every row of job that reads back, ignoring the others: for a first pass over the
// job (columns, shape), whose rows for_each_readable_row counts in the writing pass.
inline void for_each_readable_row(const JobStore& job,
                                  const std::function<void(const RowResult&)>& fn) {
  job.for_each_result(fn, [](const UnreadableRow&) {});
}

// Returns true for samples that ended normally ("stop" or "length"), as training data needs.
inline bool is_successful_sample(const SampleResult& sample) {
  return sample.finish_reason == "stop" || sample.finish_reason == "length";
}

// Returns the conversation a row continued: its messages, or the prompt as one user turn when the
// row was built from a plain prompt template without a conversation.
inline Conversation conversation_of(const RowResult& row) {
  if (!row.messages.empty()) return row.messages;
  return {ChatMessage{"user", row.prompt}};
}

}  // namespace sluice
