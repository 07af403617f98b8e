// A person's DPO decision for one row of a job with n >= 2 samples, made in the app's Pairs view:
// which sample is chosen and which rejected, that the two compared samples are a tie (equally
// good: no preference to learn from), or that the row gives no usable pair. Stored in the job
// file (job_schema.h, table pair_picks); the dpo export prefers it to its automatic rule.
#pragma once

#include <cstdint>

namespace sluice {

struct PairPick {
  int64_t row_index = 0;
  // The chosen and rejected samples; for a tie, the two samples compared; meaningless when
  // is_unusable.
  int chosen_sample_idx = 0;
  int rejected_sample_idx = 1;  // differs from chosen_sample_idx unless is_unusable
  bool is_unusable = false;     // the row is left out of the dpo export
  // The two samples are equally good: the row is left out of the dpo export (counted as a tie
  // in review). Never together with is_unusable.
  bool is_tie = false;

  // True when the decision names a chosen and a rejected sample (neither unusable nor a tie).
  bool is_pair() const { return !is_unusable && !is_tie; }

  bool operator==(const PairPick&) const = default;
};

}  // namespace sluice
