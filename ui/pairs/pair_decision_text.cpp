#include "ui/pairs/pair_decision_text.h"

#include "ui/pairs/pair_review_view.h"

namespace sluice::ui {

QString pairSampleName(int sampleIdx) {
  return PairReviewView::tr("sample %1").arg(sampleIdx + 1);
}

QString describePairDecision(const std::optional<PairPick>& pick) {
  if (!pick) return PairReviewView::tr("not reviewed");
  if (pick->is_unusable) return PairReviewView::tr("unusable");
  if (pick->is_tie) {
    return PairReviewView::tr("a tie of %1 and %2")
        .arg(pairSampleName(pick->chosen_sample_idx), pairSampleName(pick->rejected_sample_idx));
  }
  return PairReviewView::tr("%1 chosen, %2 rejected")
      .arg(pairSampleName(pick->chosen_sample_idx), pairSampleName(pick->rejected_sample_idx));
}

}  // namespace sluice::ui
