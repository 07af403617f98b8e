// A person's DPO choice for one row of a job with n >= 2 samples, made in the app's Pairs view:
// which sample is chosen and which rejected, or that the row gives no usable pair. Stored in the
// job file (job_schema.h, table pair_picks); the dpo export prefers it to its automatic rule.
#pragma once

#include <cstdint>

namespace sluice {

struct PairPick {
  int64_t row_index = 0;
  int chosen_sample_idx = 0;    // meaningless when is_unusable
  int rejected_sample_idx = 1;  // differs from chosen_sample_idx unless is_unusable
  bool is_unusable = false;     // the row is left out of the dpo export

  bool operator==(const PairPick&) const = default;
};

}  // namespace sluice
