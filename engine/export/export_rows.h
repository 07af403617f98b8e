// Which rows an export takes and what each says, shared by the format writers.
#pragma once

#include <functional>
#include <string>

#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/row_result.h"

namespace sluice {

// The reason ExportStats counts a row left out under ExportOptions::leave_out_invalid.
inline constexpr const char* kInvalidReason = "invalid";

// Returns true when options leave row out as invalid (row_validity; rows without a verdict stay).
inline bool is_left_out_as_invalid(const RowResult& row, const ExportOptions& options) {
  return options.leave_out_invalid && row_validity(row) == RowValidity::Invalid;
}

// Returns nullptr when row goes into an export, else why it is left out (a reason for
// ExportStats::leave_out): failed and skipped rows go in only when the format honours
// include_failed (jsonl, csv) and the options ask for them; an invalid row stays out under
// leave_out_invalid.
inline const char* why_row_left_out(const RowResult& row, const ExportOptions& options,
                                    bool honours_include_failed) {
  if (row.status != RowStatus::Done && !(honours_include_failed && options.include_failed))
    return to_string(row.status);
  return is_left_out_as_invalid(row, options) ? kInvalidReason : nullptr;
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

// Returns true when sample has a thinking model's reasoning: its text, or tokens counted for it.
inline bool has_reasoning(const SampleResult& sample) {
  return !sample.reasoning.empty() || sample.reasoning_tokens != 0;
}

// Returns the answer with the reasoning written back before it, as R1-style SFT data holds it:
// "<think>\n{reasoning}\n</think>\n\n{answer}"; the answer alone when the reasoning is "".
inline std::string output_with_reasoning(const SampleResult& sample) {
  if (sample.reasoning.empty()) return sample.output;
  return "<think>\n" + sample.reasoning + "\n</think>\n\n" + sample.output;
}

// Returns row as an export under mode shows it. Separate: row itself (a writer puts each
// sample's reasoning in a place of its own, when has_reasoning). Keep and Strip: every sample's
// output becomes output_with_reasoning or stays the answer, and its reasoning and
// reasoning_tokens are cleared, so a writer sees no reasoning. A row that needs a change is
// copied into storage, which must outlive the use of the result; others come back as row.
inline const RowResult& row_for_export(const RowResult& row, ReasoningExport mode,
                                       RowResult& storage) {
  if (mode == ReasoningExport::Separate) return row;
  bool has_any_reasoning = false;
  for (const SampleResult& sample : row.samples) has_any_reasoning |= has_reasoning(sample);
  if (!has_any_reasoning) return row;
  storage = row;
  for (SampleResult& sample : storage.samples) {
    if (mode == ReasoningExport::Keep) sample.output = output_with_reasoning(sample);
    sample.reasoning.clear();
    sample.reasoning_tokens = 0;
  }
  return storage;
}

// Returns the conversation a row continued: its messages, or the prompt as one user turn when the
// row was built from a plain prompt template without a conversation.
inline Conversation conversation_of(const RowResult& row) {
  if (!row.messages.empty()) return row.messages;
  return {ChatMessage{"user", row.prompt}};
}

}  // namespace sluice
