// Word-level difference of two texts for the Pairs tab: the words of each text that are not part
// of their longest common word sequence, as character spans to highlight.
#pragma once

#include <QString>
#include <QVector>

class QPlainTextEdit;

namespace sluice::ui {

struct WordSpan {
  int start = 0;  // in QString (UTF-16) positions
  int length = 0;

  bool operator==(const WordSpan&) const = default;
};

struct WordDiff {
  QVector<WordSpan> onlyInLeft;
  QVector<WordSpan> onlyInRight;
  bool isComputed = true;  // false when the texts were too long to compare (nothing marked)
};

// Above this many word pairs (left words × right words) no diff is computed: the table grows with
// the product, and two 4,000-word samples would need 16 M cells.
inline constexpr qint64 kMaxWordDiffCells = 4'000'000;

// Returns the words (runs of non-space characters) of left and right that are not in their longest
// common subsequence of words; ties keep the earliest match.
WordDiff diffWords(const QString& left, const QString& right);

// Shows left and right in the two text views with the words only one of them has highlighted
// (pair_colors: amber on the left, blue on the right, from each view's palette).
void showWordDiff(QPlainTextEdit* leftView, const QString& left, QPlainTextEdit* rightView,
                  const QString& right);

}  // namespace sluice::ui
