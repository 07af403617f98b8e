#include "ui/pairs/word_diff.h"

#include <QColor>
#include <QPlainTextEdit>
#include <QTextCursor>
#include <QTextEdit>
#include <vector>

#include "ui/pairs/pair_colors.h"

namespace sluice::ui {
namespace {

struct Word {
  WordSpan span;
  QStringView text;
};

QVector<Word> wordsOf(const QString& text) {
  QVector<Word> words;
  int start = -1;
  for (int i = 0; i <= text.size(); ++i) {
    const bool isSpace = i == text.size() || text.at(i).isSpace();
    if (!isSpace && start < 0) start = i;
    if (isSpace && start >= 0) {
      words.push_back({{start, i - start}, QStringView(text).mid(start, i - start)});
      start = -1;
    }
  }
  return words;
}

void highlight(QPlainTextEdit* view, const QVector<WordSpan>& spans, const QColor& color) {
  QList<QTextEdit::ExtraSelection> selections;
  selections.reserve(spans.size());
  for (const WordSpan& span : spans) {
    QTextEdit::ExtraSelection selection;
    selection.cursor = QTextCursor(view->document());
    selection.cursor.setPosition(span.start);
    selection.cursor.setPosition(span.start + span.length, QTextCursor::KeepAnchor);
    selection.format.setBackground(color);
    selections.push_back(selection);
  }
  view->setExtraSelections(selections);
}

}  // namespace

WordDiff diffWords(const QString& left, const QString& right) {
  const QVector<Word> a = wordsOf(left);
  const QVector<Word> b = wordsOf(right);
  WordDiff diff;
  const qint64 numCells = static_cast<qint64>(a.size() + 1) * (b.size() + 1);
  if (numCells > kMaxWordDiffCells) {
    diff.isComputed = false;
    return diff;
  }
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const qsizetype width = b.size() + 1;
  std::vector<int> lcs(static_cast<size_t>(numCells), 0);
  const auto at = [&](qsizetype i, qsizetype j) -> int& {
    return lcs[static_cast<size_t>(i * width + j)];
  };
  for (qsizetype i = a.size() - 1; i >= 0; --i) {
    for (qsizetype j = b.size() - 1; j >= 0; --j) {
      at(i, j) =
          a[i].text == b[j].text ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  qsizetype i = 0;
  qsizetype j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].text == b[j].text) {
      ++i;
      ++j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      diff.onlyInLeft.push_back(a[i++].span);
    } else {
      diff.onlyInRight.push_back(b[j++].span);
    }
  }
  for (; i < a.size(); ++i) diff.onlyInLeft.push_back(a[i].span);
  for (; j < b.size(); ++j) diff.onlyInRight.push_back(b[j].span);
  return diff;
}

void showWordDiff(QPlainTextEdit* leftView, const QString& left, QPlainTextEdit* rightView,
                  const QString& right) {
  leftView->setPlainText(left);
  rightView->setPlainText(right);
  const WordDiff diff = diffWords(left, right);
  // Amber and blue tints of each view's base, never the verdicts' red and green: a mark says
  // "only in this sample", not which sample is better.
  highlight(leftView, diff.onlyInLeft, pair_colors::onlyInLeft(leftView->palette()));
  highlight(rightView, diff.onlyInRight, pair_colors::onlyInRight(rightView->palette()));
}

}  // namespace sluice::ui
