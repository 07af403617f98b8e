// The dpo export: preference pairs from the n samples of one prompt, picked by a DpoRule.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "engine/export/exporters.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class ExportOutput;

struct DpoPair {
  size_t chosen_sample_idx = 0;
  size_t rejected_sample_idx = 0;
  // The rule could not tell chosen from rejected: longest and shortest when the two have the same
  // length or were both cut at max_tokens (finish_reason "length": their lengths measure the cut,
  // not the answers), score when their scores are equal. first and last rank nothing and give no
  // ties. A tie is still a pair, ranked as before ties were counted (equal keys: the lower sample
  // index chosen); the export writes it and counts it (ExportStats::dpo_rule_ties).
  bool is_tie = false;
};

// Returns the pair row gives under options.dpo_rule, or nullopt when it has fewer than two
// successful samples (for DpoRule::Score: with a score) or the two picked outputs are identical;
// outputs are the answers (SampleResult::output): the reasoning takes no part in the rule;
// then *why_none (when given) says which, worded to follow a count of rows ("with identical
// ..."). Throws Error naming the row and sample when a score is present but not a number.
std::optional<DpoPair> choose_dpo_pair(const RowResult& row, const ExportOptions& options,
                                       std::string* why_none = nullptr);

// Writes job as DPO-pair JSONL and returns the counts. A row with a pair pick (made in the app's
// Pairs view, stored in the job) takes its pick over options.dpo_rule: the picked samples as
// chosen and rejected, or left out when marked unusable or a tie; rows without a pick keep the
// rule (counting its ties in ExportStats::dpo_rule_ties), or are left out as "not reviewed" with
// options.reviewed_only. Throws Error naming the job file and row when a pick names a sample the
// row does not have.
ExportStats write_dpo_export(const JobStore& job, ExportOutput& out, const ExportOptions& options);

// Returns where a dpo export's pairs came from, e.g. "3 pairs from review picks, 5 by the
// longest rule, 2 of them ties" ("1 of them a tie"; "reviewed rows only" after the rule's count
// with options.reviewed_only).
std::string describe_dpo_sources(const ExportStats& stats, const ExportOptions& options);

}  // namespace sluice
