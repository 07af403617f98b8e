// PairReviewView's row filter: which rows J / K walk, a decision moves on to, and the filter combo
// counts (pair_review_view.h).
#include <QComboBox>
#include <algorithm>

#include "ui/pairs/pair_review_view.h"

namespace sluice::ui {

PairReviewView::RowFilter PairReviewView::filter() const {
  return static_cast<RowFilter>(m_filter->currentData().toInt());
}

void PairReviewView::setFilter(RowFilter rowFilter) {
  m_filter->setCurrentIndex(m_filter->findData(static_cast<int>(rowFilter)));
}

bool PairReviewView::matchesFilter(int64_t rowIndex) const {
  switch (filter()) {
    case RowFilter::All:
      return true;
    case RowFilter::Unreviewed:
      return !isReviewed(rowIndex);
    case RowFilter::Reviewed:
      return isReviewed(rowIndex);
    case RowFilter::Ties: {
      const auto it = m_decisions.find(rowIndex);
      return it != m_decisions.end() && it->second.is_tie;
    }
    case RowFilter::Disagree: {
      const auto it = m_decisions.find(rowIndex);
      return it != m_decisions.end() && disagreesWithJudge(it->second, scoresOfRow(rowIndex));
    }
    case RowFilter::SmallMargin: {
      const auto it = m_decisions.find(rowIndex);
      const std::optional<PairPick> decision =
          it != m_decisions.end() ? std::optional<PairPick>(it->second) : std::nullopt;
      return isSmallMargin(decision, scoresOfRow(rowIndex), m_judgeScale);
    }
  }
  return true;
}

const SampleScores& PairReviewView::scoresOfRow(int64_t rowIndex) const {
  static const SampleScores kNone;
  const auto it = m_scores.find(rowIndex);
  return it != m_scores.end() ? it->second : kNone;
}

std::vector<int64_t> PairReviewView::filteredRows() const {
  std::vector<int64_t> rows;
  for (const int64_t rowIndex : m_rowIndices) {
    if (matchesFilter(rowIndex)) rows.push_back(rowIndex);
  }
  return rows;
}

int PairReviewView::findPosition(int from, int step, bool isUnreviewedOnly, bool isWrapping) const {
  const int count = numRows();
  for (int k = 1; k <= count; ++k) {
    int position = from + step * k;
    if (isWrapping) {
      position = ((position % count) + count) % count;
      if (position == from) break;  // round once
    } else if (position < 0 || position >= count) {
      break;
    }
    const int64_t rowIndex = m_rowIndices[static_cast<size_t>(position)];
    if (matchesFilter(rowIndex) && (!isUnreviewedOnly || !isReviewed(rowIndex))) return position;
  }
  return -1;
}

// The row shown stays when the filter shows it; else the next row it shows (from the top again
// when none follows).
void PairReviewView::applyFilter() {
  if (!m_row || m_position < 0) return;
  if (!matchesFilter(m_row->row_index)) {
    const int next = findPosition(m_position, +1, false, true);
    if (next >= 0) {
      showRow(next);
      return;
    }
  }
  updateStatus();
}

}  // namespace sluice::ui
