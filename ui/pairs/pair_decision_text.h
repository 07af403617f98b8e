// A Pairs-tab decision in words, for the status line and the undo message.
#pragma once

#include <QString>
#include <optional>

#include "engine/jobs/pair_pick.h"

namespace sluice::ui {

// "sample 3" for sample index 2.
QString pairSampleName(int sampleIdx);

// A decision in a few words: "sample 2 chosen, sample 1 rejected", "a tie of sample 1 and
// sample 2", "unusable", "not reviewed".
QString describePairDecision(const std::optional<sluice::PairPick>& pick);

}  // namespace sluice::ui
