// PairReviewView's status: the status line (the row's decision, how many rows are reviewed, what
// the last key did), the filter's counts, and each side's verdict line in the verdict colours.
#include <QComboBox>
#include <QLabel>
#include <algorithm>

#include "ui/common/number_format.h"
#include "ui/pairs/pair_colors.h"
#include "ui/pairs/pair_decision_text.h"
#include "ui/pairs/pair_review_view.h"

namespace sluice::ui {

QString PairReviewView::statusText() const {
  return m_status->text();
}

QString PairReviewView::messageText() const {
  return m_review->isHidden() ? m_message->text() : QString();
}

void PairReviewView::updateStatus() {
  if (!m_row) return;
  updateJudge();
  const int numReviewed = static_cast<int>(m_decisions.size());
  const int numTies =
      static_cast<int>(std::count_if(m_decisions.begin(), m_decisions.end(),
                                     [](const auto& entry) { return entry.second.is_tie; }));
  const int numUnreviewed = std::max(0, numRows() - numReviewed);
  m_filter->setItemText(0, tr("All rows (%1)").arg(formatCount(numRows())));
  m_filter->setItemText(1, tr("Unreviewed (%1)").arg(formatCount(numUnreviewed)));
  m_filter->setItemText(2, tr("Reviewed (%1)").arg(formatCount(numReviewed)));
  m_filter->setItemText(3, tr("Ties (%1)").arg(formatCount(numTies)));
  int numDisagree = 0;
  int numSmallMargin = 0;
  for (const auto& [rowIndex, scores] : m_scores) {
    const auto it = m_decisions.find(rowIndex);
    const std::optional<PairPick> decision =
        it != m_decisions.end() ? std::optional<PairPick>(it->second) : std::nullopt;
    if (decision && disagreesWithJudge(*decision, scores)) ++numDisagree;
    if (isSmallMargin(decision, scores, m_judgeScale)) ++numSmallMargin;
  }
  m_filter->setItemText(4, tr("Judge and human disagree (%1)").arg(formatCount(numDisagree)));
  m_filter->setItemText(5, tr("Small margin (%1)").arg(formatCount(numSmallMargin)));
  m_rowLabel->setText(tr("Row %1 · %2 of %3 finished rows")
                          .arg(m_row->row_index)
                          .arg(formatCount(m_position + 1), formatCount(numRows())));
  const auto sampleInfo = [this](int sampleIdx) {
    if (sampleIdx < 0 || sampleIdx >= static_cast<int>(m_row->samples.size())) return QString();
    const SampleResult& sample = m_row->samples[static_cast<size_t>(sampleIdx)];
    const QString finish = QString::fromStdString(sample.finish_reason);
    if (sample.reasoning_tokens > 0) {
      return tr("%1 tokens (%2 reasoning), %3")
          .arg(sample.output_tokens)
          .arg(sample.reasoning_tokens)
          .arg(finish);
    }
    return tr("%1 tokens, %2").arg(sample.output_tokens).arg(finish);
  };
  const auto isCompared = [this](int sampleIdx) {
    return m_pick->chosen_sample_idx == sampleIdx || m_pick->rejected_sample_idx == sampleIdx;
  };
  const auto verdictOf = [&](int sampleIdx) {
    if (!m_pick) return QString();
    if (m_pick->is_unusable) return tr("unusable");
    if (m_pick->is_tie) return isCompared(sampleIdx) ? tr("tie") : QString();
    if (m_pick->chosen_sample_idx == sampleIdx) return tr("CHOSEN");
    if (m_pick->rejected_sample_idx == sampleIdx) return tr("rejected");
    return QString();
  };
  const auto setVerdict = [&](QLabel* label, int sampleIdx) {
    const QString verdict = verdictOf(sampleIdx);
    const QString info = sampleInfo(sampleIdx);
    label->setText(verdict.isEmpty() ? info : tr("%1 · %2").arg(verdict, info));
    // Green reads as the kept side, red as the other; the word marks use neither.
    const bool isPair = m_pick && m_pick->is_pair();
    const bool isChosen = isPair && m_pick->chosen_sample_idx == sampleIdx;
    const bool isRejected = isPair && m_pick->rejected_sample_idx == sampleIdx;
    const QPalette& colors = label->palette();
    label->setStyleSheet(
        isChosen ? QStringLiteral("color: %1; font-weight: bold;")
                       .arg(pair_colors::chosen(colors).name())
        : isRejected ? QStringLiteral("color: %1;").arg(pair_colors::rejected(colors).name())
                     : QString());
  };
  setVerdict(m_leftVerdict, leftSample());
  setVerdict(m_rightVerdict, rightSample());

  QString pickText;
  if (!m_pick) {
    pickText = m_scores.count(m_row->row_index)
                   ? tr("Not picked: the DPO export uses its rule for this row (with --dpo-rule "
                        "score, the judge's order).")
                   : tr("Not picked: the DPO export uses its automatic rule for this row.");
  } else if (m_pick->is_unusable) {
    pickText = tr("Marked unusable: the DPO export leaves this row out.");
  } else if (m_pick->is_tie) {
    pickText = tr("Marked a tie (%1 and %2): the DPO export leaves this row out.")
                   .arg(pairSampleName(m_pick->chosen_sample_idx),
                        pairSampleName(m_pick->rejected_sample_idx));
  } else {
    pickText = tr("Picked: %1 chosen, %2 rejected.")
                   .arg(pairSampleName(m_pick->chosen_sample_idx),
                        pairSampleName(m_pick->rejected_sample_idx));
  }
  QString sameSample;
  if (m_row->samples.size() < 2)
    sameSample = tr(" This row has fewer than two samples: there is no pair to pick.");
  else if (leftSample() == rightSample())
    sameSample = tr(" Both sides show the same sample: choose two to compare.");
  QString filterNote;
  if (!matchesFilter(m_row->row_index)) {
    filterNote = filteredRows().empty() ? tr(" No row matches the filter.")
                                        : tr(" This row no longer matches the filter.");
  }
  QString text =
      tr("%1%2 %3 of %4 rows reviewed.%5")
          .arg(pickText, sameSample, formatCount(numReviewed), formatCount(numRows()), filterNote);
  if (!m_lastAction.isEmpty()) text += '\n' + m_lastAction;
  m_status->setText(text);
}

}  // namespace sluice::ui
