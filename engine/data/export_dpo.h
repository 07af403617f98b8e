// The dpo export: preference pairs from the n samples of one prompt, picked by a DpoRule.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "engine/data/exporters.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class ExportOutput;

struct DpoPair {
  size_t chosen_sample_idx = 0;
  size_t rejected_sample_idx = 0;
};

// Returns the pair row gives under options.dpo_rule, or nullopt when it has fewer than two
// successful samples (for DpoRule::Score: with a score) or the two picked outputs are identical;
// then *why_none (when given) says which, worded to follow a count of rows ("with identical
// ..."). Throws Error naming the row and sample when a score is present but not a number.
std::optional<DpoPair> choose_dpo_pair(const RowResult& row, const ExportOptions& options,
                                       std::string* why_none = nullptr);

// Writes job as DPO-pair JSONL and returns the counts.
ExportStats write_dpo_export(const JobStore& job, ExportOutput& out, const ExportOptions& options);

}  // namespace sluice
